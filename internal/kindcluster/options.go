package kindcluster

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"time"
)

// Options say which cluster and where things are. Zero values take the
// defaults below (see withDefaults).
type Options struct {
	// Root is the evictkit checkout (default: the working directory).
	Root string
	// Name of the cluster; default: the config's name, else "evictkit".
	Name string
	// Config is the kind config file (default Root/kind-config.yaml).
	Config string
	// Image is the node image (default: the name in Root/_output/node-image,
	// written by scripts/node-image.sh).
	Image string
	// Kubeconfig is written here (default Root/_output/kubeconfig); the
	// user's ~/.kube/config is never touched.
	Kubeconfig string
	// StateDir holds the dedicated filesystems (default $EVICTKIT_STATE_DIR,
	// else /var/lib/evictkit).
	StateDir string
	// LogsDir receives exported logs (default Root/_output/logs).
	LogsDir string
	// Workers overrides the number of worker nodes when >= 0 (0: a
	// one-node cluster whose control plane takes pods); -1 keeps the
	// config's nodes.
	Workers int
	// ReadyTimeout bounds the wait for every node to be Ready.
	ReadyTimeout time.Duration
	// Out receives progress lines (default os.Stderr).
	Out io.Writer
}

func (o Options) withDefaults() (Options, error) {
	if o.Root == "" {
		wd, err := os.Getwd()
		if err != nil {
			return o, err
		}
		o.Root = wd
	}
	if o.Config == "" {
		o.Config = filepath.Join(o.Root, "kind-config.yaml")
	}
	if o.Kubeconfig == "" {
		o.Kubeconfig = filepath.Join(o.Root, "_output", "kubeconfig")
	}
	if o.StateDir == "" {
		o.StateDir = os.Getenv("EVICTKIT_STATE_DIR")
		if o.StateDir == "" {
			o.StateDir = "/var/lib/evictkit"
		}
	}
	if o.LogsDir == "" {
		o.LogsDir = filepath.Join(o.Root, "_output", "logs")
	}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = 5 * time.Minute
	}
	if o.Out == nil {
		o.Out = os.Stderr
	}
	return o, nil
}

// nodeImage is o.Image, else the image scripts/node-image.sh last built.
func (o Options) nodeImage() (string, error) {
	if o.Image != "" {
		return o.Image, nil
	}
	raw, err := os.ReadFile(filepath.Join(o.Root, "_output", "node-image"))
	if errors.Is(err, os.ErrNotExist) {
		return "", errors.New("no node image: _output/node-image is missing (run: make node-image)")
	} else if err != nil {
		return "", err
	}
	return string(bytes.TrimSpace(raw)), nil
}

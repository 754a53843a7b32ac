package kindcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cmd"
)

// DefaultName is the cluster's name when neither Options nor the config
// names one.
const DefaultName = "evictkit"

// session is what every operation works with: resolved options, the
// cluster's config and kind's provider (on the project's Docker engine,
// DOCKER_HOST as set by scripts/lib/engine-env.sh).
type session struct {
	opts     Options
	cfg      *v1alpha4.Cluster
	provider *cluster.Provider
	progress progress
}

func newSession(o Options) (*session, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	cfg, err := loadConfig(o.Config)
	if err != nil {
		return nil, err
	}
	switch {
	case o.Name != "":
		cfg.Name = o.Name
	case cfg.Name == "":
		cfg.Name = DefaultName
	}
	if err := withWorkers(cfg, o.Workers); err != nil {
		return nil, err
	}
	return &session{
		opts:     o,
		cfg:      cfg,
		provider: cluster.NewProvider(cluster.ProviderWithDocker(), cluster.ProviderWithLogger(cmd.NewLogger())),
		progress: progress{out: o.Out},
	}, nil
}

func (s *session) exists() (bool, error) {
	names, err := s.provider.List()
	if err != nil {
		return false, fmt.Errorf("listing kind clusters (is the engine up? scripts/engine.sh up): %w", err)
	}
	return slices.Contains(names, s.cfg.Name), nil
}

// Up creates the cluster unless it already runs, waits until every node is
// Ready on the patched kubelet, and proves pod networking across nodes and
// through a ClusterIP Service. On failure it exports the cluster's logs and
// leaves the cluster for inspection (make cluster-down removes it).
func Up(ctx context.Context, o Options) (err error) {
	s, err := newSession(o)
	if err != nil {
		return err
	}
	image, err := s.opts.nodeImage()
	if err != nil {
		return err
	}
	start := time.Now()
	exists, err := s.exists()
	if err != nil {
		return err
	}
	defer func() {
		if err != nil && exists {
			dir, lerr := s.exportLogs("failed")
			if lerr != nil {
				s.progress.note("exporting logs failed too: %v", lerr)
			} else {
				s.progress.note("logs of the failed cluster: %s", dir)
			}
		}
	}()
	if exists {
		running, err := s.nodesRunning()
		if err != nil {
			return err
		}
		if !running {
			// e.g. the engine was stopped under it: its nodes cannot come back
			// with their state, so start over.
			s.progress.note("cluster %s exists but its nodes are not running; recreating it", s.cfg.Name)
			if err := s.provider.Delete(s.cfg.Name, s.opts.Kubeconfig); err != nil {
				return fmt.Errorf("deleting stopped cluster %s: %w", s.cfg.Name, err)
			}
			exists = false
		}
	}
	if exists {
		if err := s.checkImage(image); err != nil {
			return err
		}
		s.progress.note("cluster %s already exists on %s; checking it", s.cfg.Name, image)
		if err := s.provider.ExportKubeConfig(s.cfg.Name, s.opts.Kubeconfig, false); err != nil {
			return fmt.Errorf("exporting kubeconfig: %w", err)
		}
		if err := s.resetKubelets(); err != nil {
			return err
		}
	} else {
		reqs, err := diskRequests(s.cfg)
		if err != nil {
			return err
		}
		// Leftovers of an earlier cluster of this name that was not taken down.
		if err := removeDisks(s.progress, s.opts.StateDir, s.cfg.Name); err != nil {
			return fmt.Errorf("removing stale dedicated filesystems: %w", err)
		}
		if len(reqs) > 0 {
			if err := s.progress.step("dedicated filesystems", func() error {
				return prepareDisks(s.progress, s.cfg, reqs, s.opts.StateDir, image)
			}); err != nil {
				_ = removeDisks(s.progress, s.opts.StateDir, s.cfg.Name)
				return err
			}
		}
		exists = true // from here on a failure leaves something to inspect
		if err := s.progress.step(fmt.Sprintf("kind create cluster %s (%d nodes, %s)", s.cfg.Name, len(s.cfg.Nodes), image), func() error {
			return s.provider.Create(s.cfg.Name,
				cluster.CreateWithV1Alpha4Config(s.cfg),
				cluster.CreateWithNodeImage(image),
				cluster.CreateWithKubeconfigPath(s.opts.Kubeconfig),
				cluster.CreateWithDisplayUsage(false),
				cluster.CreateWithDisplaySalutation(false),
				cluster.CreateWithRetain(true), // on failure, keep the nodes for the logs
			)
		}); err != nil {
			return err
		}
	}
	c, err := newClient(s.opts.Kubeconfig)
	if err != nil {
		return err
	}
	if err := s.progress.step(fmt.Sprintf("all %d nodes Ready on the evictkit kubelet", len(s.cfg.Nodes)), func() error {
		return waitNodesReady(ctx, s.progress, c, len(s.cfg.Nodes), s.opts.ReadyTimeout)
	}); err != nil {
		return err
	}
	if err := s.progress.step("kube-system: kube-proxy on every node, CoreDNS available", func() error {
		return waitSystemPods(ctx, c, s.opts.ReadyTimeout)
	}); err != nil {
		return err
	}
	if err := s.progress.step("pod network: pod to pod (across nodes where there are two), ClusterIP Service, DNS", func() error {
		return checkNetwork(ctx, s, c)
	}); err != nil {
		return err
	}
	s.progress.note("cluster %s is up in %s; kubeconfig: %s", s.cfg.Name, time.Since(start).Round(time.Second), s.opts.Kubeconfig)
	return nil
}

// nodesRunning says whether every node container of the cluster runs.
func (s *session) nodesRunning() (bool, error) {
	nodes, err := s.provider.ListNodes(s.cfg.Name)
	if err != nil {
		return false, err
	}
	for _, n := range nodes {
		state, err := dockerOutput("inspect", "--format", "{{.State.Running}}", n.String())
		if err != nil {
			return false, err
		}
		if state != "true" {
			return false, nil
		}
	}
	return len(nodes) > 0, nil
}

// checkImage fails when the running cluster's nodes use another image.
func (s *session) checkImage(want string) error {
	nodes, err := s.provider.ListNodes(s.cfg.Name)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		got, err := dockerOutput("inspect", "--format", "{{.Config.Image}}", n.String())
		if err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("cluster %s runs node image %s, not %s (run: make cluster-down, then make cluster)", s.cfg.Name, got, want)
		}
	}
	return nil
}

// Down deletes the cluster, its dedicated filesystems and its kubeconfig.
// Idempotent: nothing to remove is not an error.
func Down(ctx context.Context, o Options) error {
	s, err := newSession(o)
	if err != nil {
		return err
	}
	exists, err := s.exists()
	if err != nil {
		return err
	}
	if exists {
		if err := s.progress.step("kind delete cluster "+s.cfg.Name, func() error {
			return s.provider.Delete(s.cfg.Name, s.opts.Kubeconfig)
		}); err != nil {
			return err
		}
	} else {
		s.progress.note("cluster %s does not exist", s.cfg.Name)
	}
	if err := removeDisks(s.progress, s.opts.StateDir, s.cfg.Name); err != nil {
		return fmt.Errorf("removing dedicated filesystems: %w", err)
	}
	if err := os.Remove(s.opts.Kubeconfig); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// Logs exports the cluster's logs (kind's: journal, kubelet, containerd,
// pods, inspect output) to LogsDir/kind-<cluster>-<time>-<why>, and returns
// that directory.
func Logs(ctx context.Context, o Options, why string) (string, error) {
	s, err := newSession(o)
	if err != nil {
		return "", err
	}
	return s.exportLogs(why)
}

func (s *session) exportLogs(why string) (string, error) {
	name := fmt.Sprintf("kind-%s-%s", s.cfg.Name, time.Now().UTC().Format("20060102T150405Z"))
	if why != "" {
		name += "-" + why
	}
	dir := filepath.Join(s.opts.LogsDir, name)
	err := s.progress.step("exporting cluster logs to "+dir, func() error {
		return s.provider.CollectLogs(s.cfg.Name, dir)
	})
	return dir, err
}

// dockerOutput runs the docker CLI and returns its trimmed output.
func dockerOutput(args ...string) (string, error) {
	out, err := execOutput("docker", args...)
	return strings.TrimSpace(out), err
}

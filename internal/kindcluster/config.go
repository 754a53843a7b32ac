package kindcluster

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
)

// Node labels in kind-config.yaml that ask for small dedicated filesystems
// on a node (see disks.go). The labels also end up on the Kubernetes node,
// so tests can find such nodes.
const (
	// LabelNodefsSize gives the node one filesystem of this size for the
	// kubelet's root directory, pod logs and, unless LabelImagefsSize is
	// set too, containerd's root (nodefs and imagefs on one device, the
	// upstream default layout).
	LabelNodefsSize = "evictkit.dev/nodefs-size"
	// LabelImagefsSize gives containerd's root its own filesystem of this
	// size (a split imagefs). Only valid together with LabelNodefsSize.
	LabelImagefsSize = "evictkit.dev/imagefs-size"
)

// Limits on the size of a dedicated filesystem.
var (
	minDiskSize = resource.MustParse("256Mi")
	maxDiskSize = resource.MustParse("64Gi")
)

// loadConfig reads a kind v1alpha4 cluster config, rejecting unknown fields
// as kind does.
func loadConfig(path string) (*v1alpha4.Cluster, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading kind config: %w", err)
	}
	cfg := &v1alpha4.Cluster{}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil {
		return nil, fmt.Errorf("kind config %s: %w", path, err)
	}
	if cfg.Kind != "Cluster" || cfg.APIVersion != "kind.x-k8s.io/v1alpha4" {
		return nil, fmt.Errorf("kind config %s: want kind Cluster, apiVersion kind.x-k8s.io/v1alpha4, got kind %q, apiVersion %q",
			path, cfg.Kind, cfg.APIVersion)
	}
	v1alpha4.SetDefaultsCluster(cfg)
	return cfg, nil
}

// withWorkers keeps the first control-plane node and n workers of cfg's
// nodes (reusing the configured workers first, then copying the last one).
// n < 0 leaves cfg unchanged.
func withWorkers(cfg *v1alpha4.Cluster, n int) error {
	if n < 0 {
		return nil
	}
	var controlPlane *v1alpha4.Node
	var workers []v1alpha4.Node
	for i := range cfg.Nodes {
		switch cfg.Nodes[i].Role {
		case v1alpha4.ControlPlaneRole:
			if controlPlane == nil {
				controlPlane = &cfg.Nodes[i]
			}
		case v1alpha4.WorkerRole:
			workers = append(workers, cfg.Nodes[i])
		}
	}
	if controlPlane == nil {
		return errors.New("kind config has no control-plane node")
	}
	nodes := []v1alpha4.Node{*controlPlane}
	for i := 0; i < n; i++ {
		switch {
		case i < len(workers):
			nodes = append(nodes, workers[i])
		case len(workers) > 0:
			nodes = append(nodes, workers[len(workers)-1])
		default:
			nodes = append(nodes, v1alpha4.Node{Role: v1alpha4.WorkerRole})
		}
	}
	cfg.Nodes = nodes
	return nil
}

// nodeNames are the names kind gives cfg's nodes, in order: the cluster
// name, the role, and a counter from the second node of a role on.
func nodeNames(cfg *v1alpha4.Cluster) []string {
	counts := map[v1alpha4.NodeRole]int{}
	names := make([]string, len(cfg.Nodes))
	for i, n := range cfg.Nodes {
		counts[n.Role]++
		suffix := ""
		if c := counts[n.Role]; c > 1 {
			suffix = strconv.Itoa(c)
		}
		names[i] = fmt.Sprintf("%s-%s%s", cfg.Name, n.Role, suffix)
	}
	return names
}

// diskRequest is what a node's labels ask for; zero sizes mean none.
type diskRequest struct {
	node    string
	nodefs  resource.Quantity
	imagefs resource.Quantity
}

func (d diskRequest) wanted() bool { return !d.nodefs.IsZero() }
func (d diskRequest) split() bool  { return !d.imagefs.IsZero() }

// diskRequests reads the disk labels of every node, with errors that name
// the node, the label and the value.
func diskRequests(cfg *v1alpha4.Cluster) ([]diskRequest, error) {
	names := nodeNames(cfg)
	var out []diskRequest
	for i, n := range cfg.Nodes {
		req := diskRequest{node: names[i]}
		for _, label := range []struct {
			key string
			dst *resource.Quantity
		}{{LabelNodefsSize, &req.nodefs}, {LabelImagefsSize, &req.imagefs}} {
			value, ok := n.Labels[label.key]
			if !ok {
				continue
			}
			q, err := parseDiskSize(value)
			if err != nil {
				return nil, fmt.Errorf("node %s: label %s=%q: %w", names[i], label.key, value, err)
			}
			*label.dst = q
		}
		if req.split() && !req.wanted() {
			return nil, fmt.Errorf("node %s: label %s needs %s too (imagefs is split from a dedicated nodefs)",
				names[i], LabelImagefsSize, LabelNodefsSize)
		}
		if req.wanted() {
			out = append(out, req)
		}
	}
	return out, nil
}

func parseDiskSize(value string) (resource.Quantity, error) {
	q, err := resource.ParseQuantity(value)
	if err != nil {
		return resource.Quantity{}, fmt.Errorf("not a quantity (want e.g. 1536Mi): %w", err)
	}
	if q.Cmp(minDiskSize) < 0 || q.Cmp(maxDiskSize) > 0 {
		return resource.Quantity{}, fmt.Errorf("size must be between %s and %s", minDiskSize.String(), maxDiskSize.String())
	}
	return q, nil
}

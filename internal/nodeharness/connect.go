package nodeharness

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/evictkit/evictkit/internal/kindcluster"
)

// Kubelets a node can run.
const (
	KubeletEvictkit = kindcluster.KubeletEvictkit
	KubeletUpstream = kindcluster.KubeletUpstream
)

// Config says which node of which cluster the suites run against.
type Config struct {
	// Root is the evictkit checkout.
	Root string
	// Cluster is the kind cluster's name.
	Cluster string
	// Node is the node under test.
	Node string
	// Kubeconfig of the cluster.
	Kubeconfig string
	// Kubelet is the kubelet the node must run: KubeletEvictkit or
	// KubeletUpstream.
	Kubelet string
	// LogDir receives what failed tests leave for diagnosis.
	LogDir string
	// Suite names the suite in the objects it creates (namespace names,
	// the client's user agent): "node-e2e" when empty.
	Suite string
}

// Framework is a connection to the node under test.
type Framework struct {
	Config
	Client kubernetes.Interface
	node   nodes.Node
	// Image is the workload image (test/images/workload), loaded into every
	// node and pinned so that image garbage collection keeps it.
	Image string
	// podsStoppedAt is when the node last stopped the pods of a deleted
	// namespace: Observe waits for figures taken after it.
	podsStoppedAt time.Time
}

// New connects to the cluster, checks that the node exists, is Ready and
// runs the expected kubelet, puts back a kubelet configuration that an
// interrupted run left changed, and loads the workload image.
func New(ctx context.Context, cfg Config) (*Framework, error) {
	if cfg.Kubelet != KubeletEvictkit && cfg.Kubelet != KubeletUpstream {
		return nil, fmt.Errorf("kubelet %q: want %s or %s", cfg.Kubelet, KubeletEvictkit, KubeletUpstream)
	}
	rc, err := clientcmd.BuildConfigFromFlags("", cfg.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig %s (is the cluster up? make cluster): %w", cfg.Kubeconfig, err)
	}
	if cfg.Suite == "" {
		cfg.Suite = "node-e2e"
	}
	rc.UserAgent = "evictkit-" + cfg.Suite
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	f := &Framework{Config: cfg, Client: client}
	f.node, err = kindcluster.Node(f.clusterOptions(), cfg.Node)
	if err != nil {
		return nil, err
	}
	// A configuration an interrupted run left changed is put back first.
	if err := f.RestoreKubeletConfig(ctx); err != nil {
		return nil, err
	}
	n, err := f.GetNode(ctx)
	if err != nil {
		return nil, err
	}
	if !IsReady(n) {
		return nil, fmt.Errorf("node %s is not Ready", cfg.Node)
	}
	if got := kindcluster.KubeletFlavor(n.Status.NodeInfo.KubeletVersion); got != cfg.Kubelet {
		return nil, fmt.Errorf("node %s runs kubelet %s (%s), the suites were asked to test %s (switch with: scripts/cluster.sh kubelet %s %s)",
			cfg.Node, n.Status.NodeInfo.KubeletVersion, got, cfg.Kubelet, cfg.Node, cfg.Kubelet)
	}
	if err := f.loadWorkloadImage(ctx); err != nil {
		return nil, err
	}
	return f, nil
}

func (f *Framework) clusterOptions() kindcluster.Options {
	return kindcluster.Options{
		Root:       f.Root,
		Name:       f.Cluster,
		Config:     filepath.Join(f.Root, "kind-config.yaml"),
		Kubeconfig: f.Kubeconfig,
		Workers:    -1,
	}
}

// GetNode reads the node under test from the API server.
func (f *Framework) GetNode(ctx context.Context) (*corev1.Node, error) {
	n, err := f.Client.CoreV1().Nodes().Get(ctx, f.Node, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading node %s: %w", f.Node, err)
	}
	return n, nil
}

// NodePressures lists the pressure conditions that are True on the node
// under test now.
func (f *Framework) NodePressures(ctx context.Context) ([]corev1.NodeConditionType, error) {
	n, err := f.GetNode(ctx)
	if err != nil {
		return nil, err
	}
	return Pressures(n), nil
}

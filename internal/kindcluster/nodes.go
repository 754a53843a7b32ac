package kindcluster

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/evictkit/evictkit/internal/vmnode"
)

// Kubelets a node can run (see images/node/files/usr/local/bin/evictkit-kubelet).
const (
	KubeletEvictkit = "evictkit"
	KubeletUpstream = "upstream"
)

// The kubelet's configuration file in a kind node (written by kubeadm),
// and where a test that changes it keeps the original meanwhile.
const (
	KubeletConfigPath   = "/var/lib/kubelet/config.yaml"
	KubeletConfigBackup = KubeletConfigPath + ".evictkit-orig"
)

func newClient(kubeconfig string) (kubernetes.Interface, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", kubeconfig, err)
	}
	cfg.UserAgent = "evictkit-cluster"
	return kubernetes.NewForConfig(cfg)
}

// NodeReady reports whether the node's Ready condition is True, and its
// last heartbeat.
func NodeReady(n *corev1.Node) (bool, time.Time) {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue, c.LastHeartbeatTime.Time
		}
	}
	return false, time.Time{}
}

// KubeletFlavor says which kubelet a node reports from its version string.
func KubeletFlavor(version string) string {
	if strings.Contains(version, "-evictkit.") {
		return KubeletEvictkit
	}
	return KubeletUpstream
}

// waitNodesReady waits until want nodes exist, all Ready on the evictkit
// kubelet, then prints them.
func waitNodesReady(ctx context.Context, p progress, c kubernetes.Interface, want int, timeout time.Duration) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		var waiting []string
		for i := range nodes.Items {
			n := &nodes.Items[i]
			if ready, _ := NodeReady(n); !ready {
				waiting = append(waiting, n.Name+" not Ready")
			} else if f := KubeletFlavor(n.Status.NodeInfo.KubeletVersion); f != KubeletEvictkit {
				waiting = append(waiting, fmt.Sprintf("%s runs kubelet %s", n.Name, n.Status.NodeInfo.KubeletVersion))
			}
		}
		if len(nodes.Items) < want {
			waiting = append(waiting, fmt.Sprintf("%d of %d nodes registered", len(nodes.Items), want))
		}
		last = strings.Join(waiting, "; ")
		return len(waiting) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("nodes not Ready within %s: %s", timeout, last)
	}
	nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	sort.Slice(nodes.Items, func(i, j int) bool { return nodes.Items[i].Name < nodes.Items[j].Name })
	for _, n := range nodes.Items {
		p.note("%-26s Ready  kubelet %s  pod CIDR %s", n.Name, n.Status.NodeInfo.KubeletVersion, n.Spec.PodCIDR)
	}
	return nil
}

// SwitchKubelet makes node run the given kubelet (KubeletEvictkit or
// KubeletUpstream): it switches the node's /usr/bin/kubelet, restarts the
// kubelet with the same configuration and waits until the node reports the
// new kubelet's version and a Ready heartbeat from after the restart.
func SwitchKubelet(ctx context.Context, o Options, node, which string) error {
	if which != KubeletEvictkit && which != KubeletUpstream {
		return fmt.Errorf("kubelet %q: want %s or %s", which, KubeletEvictkit, KubeletUpstream)
	}
	s, err := newSession(o)
	if err != nil {
		return err
	}
	n, err := s.node(node)
	if err != nil {
		return err
	}
	c, err := newClient(s.opts.Kubeconfig)
	if err != nil {
		return err
	}
	return s.progress.step(fmt.Sprintf("node %s: kubelet %s", node, which), func() error {
		if _, err := s.restoreKubeletConfig(n); err != nil {
			return err
		}
		switched := time.Now()
		var out strings.Builder
		if err := n.Command("evictkit-kubelet", which).SetStdout(&out).SetStderr(&out).Run(); err != nil {
			return fmt.Errorf("evictkit-kubelet %s: %w: %s", which, err, out.String())
		}
		var last string
		err := wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			got, err := c.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
			if err != nil {
				last = err.Error()
				return false, nil
			}
			ready, heartbeat := NodeReady(got)
			version := got.Status.NodeInfo.KubeletVersion
			last = fmt.Sprintf("ready=%v heartbeat=%s kubelet=%s", ready, heartbeat.Format(time.RFC3339), version)
			// Heartbeats have a one-second resolution.
			return ready && KubeletFlavor(version) == which && !heartbeat.Before(switched.Truncate(time.Second)), nil
		})
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("node %s: interrupted while waiting for it to be Ready on the %s kubelet (%s): %w", node, which, last, ctx.Err())
			}
			return fmt.Errorf("node %s not Ready on the %s kubelet within 2m: %s", node, which, last)
		}
		s.progress.note("%s", strings.TrimSpace(out.String()))
		return nil
	})
}

// restoreKubeletConfig puts back the kubelet configuration a test run
// left changed when it was interrupted before it could (a changed one may
// hold gates the other kubelet refuses), and says whether there was one.
// It does not restart the kubelet.
func (s *session) restoreKubeletConfig(n nodes.Node) (bool, error) {
	var out strings.Builder
	script := fmt.Sprintf("if [ -e %[2]s ]; then mv %[2]s %[1]s; echo restored; fi", KubeletConfigPath, KubeletConfigBackup)
	if err := n.Command("sh", "-c", script).SetStdout(&out).Run(); err != nil {
		return false, fmt.Errorf("node %s: putting back %s: %w", n.String(), KubeletConfigBackup, err)
	}
	restored := strings.TrimSpace(out.String()) == "restored"
	if restored {
		s.progress.note("node %s: put back the kubelet configuration an interrupted test run left changed", n.String())
	}
	return restored, nil
}

// resetKubelets brings every node of a running cluster back to its
// original kubelet configuration and to the evictkit kubelet, as a test
// run interrupted in the middle leaves neither behind.
func (s *session) resetKubelets() error {
	list, err := s.provider.ListNodes(s.cfg.Name)
	if err != nil {
		return err
	}
	for _, n := range list {
		var active strings.Builder
		if err := n.Command("evictkit-kubelet").SetStdout(&active).Run(); err != nil {
			return fmt.Errorf("node %s: evictkit-kubelet: %w", n.String(), err)
		}
		changed, err := s.restoreKubeletConfig(n)
		if err != nil {
			return err
		}
		switch {
		case strings.TrimSpace(active.String()) != KubeletEvictkit:
			s.progress.note("node %s: runs kubelet %s; switching it back to %s", n.String(), strings.TrimSpace(active.String()), KubeletEvictkit)
			err = n.Command("evictkit-kubelet", KubeletEvictkit).Run()
		case changed:
			err = n.Command("systemctl", "restart", "kubelet").Run()
		}
		if err != nil {
			return fmt.Errorf("node %s: restarting the kubelet: %w", n.String(), err)
		}
	}
	return nil
}

// waitSystemPods waits until the kube-proxy DaemonSet runs a ready pod on
// every node and the CoreDNS Deployment has all its replicas available:
// Services and cluster DNS work from then on.
func waitSystemPods(ctx context.Context, c kubernetes.Interface, timeout time.Duration) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		ds, err := c.AppsV1().DaemonSets("kube-system").Get(ctx, "kube-proxy", metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		dns, err := c.AppsV1().Deployments("kube-system").Get(ctx, "coredns", metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		want := int32(1)
		if dns.Spec.Replicas != nil {
			want = *dns.Spec.Replicas
		}
		last = fmt.Sprintf("kube-proxy %d/%d ready, coredns %d/%d available",
			ds.Status.NumberReady, ds.Status.DesiredNumberScheduled, dns.Status.AvailableReplicas, want)
		return ds.Status.DesiredNumberScheduled > 0 && ds.Status.NumberReady == ds.Status.DesiredNumberScheduled &&
			dns.Status.AvailableReplicas == want, nil
	})
	if err != nil {
		return fmt.Errorf("kube-system not ready within %s: %s", timeout, last)
	}
	return nil
}

// Node returns the cluster's node container called name, to run commands in
// (kind's nodes.Node: Command(...).Run()).
func Node(o Options, name string) (nodes.Node, error) {
	s, err := newSession(o)
	if err != nil {
		return nil, err
	}
	return s.node(name)
}

func (s *session) node(name string) (nodes.Node, error) {
	list, err := s.provider.ListNodes(s.cfg.Name)
	if err != nil {
		return nil, fmt.Errorf("listing the nodes of cluster %s (is the engine up? scripts/engine.sh up): %w", s.cfg.Name, err)
	}
	var names []string
	for _, n := range list {
		if n.String() == name {
			return n, nil
		}
		names = append(names, n.String())
	}
	// A cgroup v2 VM node that scripts/vm-node.sh joined to this cluster.
	vm, ok, err := vmnode.Lookup(vmnode.StateDir(), name)
	if err != nil {
		return nil, err
	}
	if ok {
		return vm, nil
	}
	return nil, fmt.Errorf("cluster %s has no node %q (nodes: %s; no VM node of that name runs)", s.cfg.Name, name, strings.Join(names, ", "))
}

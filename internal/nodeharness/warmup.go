package nodeharness

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// WarmUp runs one pod of the workload image on the node until it runs,
// removes it again, and returns how long it took to start. A node's first
// pod pays for unpacking the sandbox and workload images into snapshots:
// seconds on a kind node, minutes on the cgroup v2 VM under TCG. The specs
// bound their own pods' starts and must not pay for that.
func (f *Framework) WarmUp(ctx context.Context, timeout time.Duration) (time.Duration, error) {
	ns, err := f.CreateNamespace(ctx, "warmup")
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.DeleteNamespace(context.WithoutCancel(ctx), ns) }()
	start := time.Now()
	if _, err := f.CreatePod(ctx, ns, f.Pod("warmup", []string{"sleep"})); err != nil {
		return 0, err
	}
	err = wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		p, err := f.Client.CoreV1().Pods(ns).Get(ctx, "warmup", metav1.GetOptions{})
		return err == nil && IsRunning(p), nil
	})
	if err != nil {
		return 0, fmt.Errorf("the warm-up pod on %s did not run within %s", f.Node, timeout)
	}
	return time.Since(start), f.DeleteNamespace(ctx, ns)
}

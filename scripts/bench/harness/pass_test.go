//go:build evictbench

package harness

import (
	"context"
	"errors"
	"fmt"
	"testing"

	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// warmupPasses run before the measured window opens: the first passes
// detect the filesystem layout and fill the manager's state.
const warmupPasses = 3

var errWindowClosed = errors.New("benchmark window closed")

// passCounter answers the manager's summary requests at once from the World
// and counts them: each request opens one monitoring pass. The request that
// would open the pass after the window ends the loop instead (it cancels
// the loop's context and fails), so no manager outlives its benchmark.
type passCounter struct {
	*World
	passes, last int
	opened, done chan struct{}
	stop         context.CancelFunc
}

func (c *passCounter) Get(ctx context.Context, updateStats bool) (*statsapi.Summary, error) {
	c.passes++
	switch c.passes {
	case warmupPasses + 1:
		close(c.opened)
	case c.last:
		c.stop()
		close(c.done)
		return nil, errWindowClosed
	}
	return c.World.Get(ctx, updateStats)
}

// BenchmarkPass measures the whole monitoring pass as the kubelet runs it:
// each implementation's exported NewManager and Start, on the real clock,
// with a monitoring interval of zero, so the loop runs pass after pass.
// An iteration is one pass (summary, pods, decision, loop bookkeeping);
// allocations are the whole process's, which is only the loop while the
// benchmark goroutine waits. No threshold is met (the idle scenario): a
// pass that evicts waits for cleanup on the real clock, which would be
// measured instead of the pass.
func BenchmarkPass(b *testing.B) {
	for _, n := range Sizes {
		for _, im := range impls {
			b.Run(fmt.Sprintf("scenario=%s/pods=%d/impl=%s", Idle, n, im.name), func(b *testing.B) {
				w := world(n)
				if w.Scenario != Idle {
					w.SetScenario(Idle)
				}
				verify(b, w)
				ctx, stop := context.WithCancel(benchContext())
				defer stop()
				c := &passCounter{World: w, last: warmupPasses + b.N + 1,
					opened: make(chan struct{}), done: make(chan struct{}), stop: stop}
				kills := w.Kills
				if err := im.start(ctx, w, c); err != nil {
					b.Fatal(err)
				}
				<-c.opened
				b.ReportAllocs()
				b.ResetTimer()
				<-c.done
				b.StopTimer()
				if got := w.Kills - kills; got != 0 {
					b.Fatalf("%d pods killed with no threshold met", got)
				}
			})
		}
	}
}

//evictkit:file wired

package eviction

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
)

// mgrEventually polls cond every few milliseconds for up to 10s of real time.
func mgrEventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestMgrNewManagerInterfaces(t *testing.T) {
	h := mgrNewHarness(t, mgrMemoryConfig(), false, fakeHealthyNode().summary(mgrEpoch))
	var _ Manager = h.m
	var _ lifecycle.PodAdmitHandler = h.m
	if h.m.IsUnderMemoryPressure() || h.m.IsUnderDiskPressure() || h.m.IsUnderPIDPressure() {
		t.Errorf("a new manager reports pressure")
	}
	if r := mgrAdmit(h, pod("be")); !r.Admit {
		t.Errorf("a new manager rejects pods: %+v", r)
	}
}

// mgrConsistently fails if cond stops holding at any time during window
// (of real time): the bounded negative check of something that must not
// happen.
func mgrConsistently(t *testing.T, what string, window time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(window)
	for time.Now().Before(deadline) {
		if !cond() {
			t.Fatalf("%s stopped holding within %s", what, window)
		}
		time.Sleep(time.Millisecond)
	}
}

// The monitoring loop runs a pass per interval of the manager's clock, and
// stops with its context.
func TestMgrStartReturnsAndStopsOnCancel(t *testing.T) {
	h := mgrNewHarness(t, mgrMemoryConfig(), false, fakeHealthyNode().summary(mgrEpoch))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	returned := make(chan struct{})
	go func() {
		h.m.Start(ctx, h.disk, h.activePods, func(*v1.Pod) bool { return true }, 10*time.Second)
		close(returned)
	}()
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatalf("Start did not return")
	}
	// A pass at once, then one per interval: the loop waits on its timer
	// between passes.
	mgrEventually(t, "the first pass and the wait after it", func() bool { return h.summary.calls() == 1 && h.clock.Waiters() == 1 })
	h.clock.Step(10*time.Second - time.Millisecond)
	mgrConsistently(t, "no pass before the interval is up", 50*time.Millisecond, func() bool { return h.summary.calls() == 1 })
	h.clock.Step(time.Millisecond)
	mgrEventually(t, "the second pass and the wait after it", func() bool { return h.summary.calls() == 2 && h.clock.Waiters() == 1 })

	cancel()
	// Once the loop has left its wait (it never waits again), no interval
	// of the clock brings another pass.
	mgrEventually(t, "the loop to stop waiting", func() bool { return h.clock.Waiters() == 0 })
	h.clock.Step(time.Hour)
	mgrConsistently(t, "no pass after cancel", 50*time.Millisecond, func() bool { return h.summary.calls() == 2 && !h.clock.HasWaiters() })
}

// After an eviction the loop waits for the pod to be cleaned up (on the
// manager's clock) and then runs a pass at once.
func TestMgrStartWaitsForCleanupAfterEviction(t *testing.T) {
	pods, st := mgrMemoryPods()
	h := mgrNewHarness(t, mgrMemoryConfig(), false, mgrMemoryPressureNode().summary(mgrEpoch, st...))
	h.pods = pods
	var cleaned atomic.Bool
	var cleanupChecks atomic.Int32
	cleanedUp := func(p *v1.Pod) bool {
		cleanupChecks.Add(1)
		return cleaned.Load()
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// A long real-time interval: only a completed cleanup wait can trigger
	// the second pass within the test.
	h.m.Start(ctx, h.disk, h.activePods, cleanedUp, time.Hour)

	mgrEventually(t, "an eviction", func() bool { return len(h.killer.get()) == 1 })
	mgrEventually(t, "the cleanup wait to arm its timer and ticker", func() bool { return h.clock.Waiters() >= 2 })
	if h.summary.calls() != 1 {
		t.Fatalf("summary read %d times before cleanup, want 1", h.summary.calls())
	}
	h.clock.Step(time.Second)
	mgrEventually(t, "a cleanup check", func() bool { return cleanupChecks.Load() >= 1 })
	if h.summary.calls() != 1 {
		t.Fatalf("loop went on before the pod was cleaned up")
	}
	cleaned.Store(true)
	// Step until the loop notices; a step can land before the loop is back
	// waiting on the ticker.
	mgrEventually(t, "the next pass after cleanup", func() bool {
		if h.summary.calls() >= 2 {
			return true
		}
		h.clock.Step(time.Second)
		return false
	})
	// The second pass saw stale stats and must not evict again. It runs
	// with one waiter on the clock (the cleanup wait's ticker, which the
	// fake clock keeps after Stop); once it is over, the loop waits again
	// (its interval's timer, or a cleanup wait after a kill made first).
	mgrEventually(t, "the loop to wait again", func() bool { return h.summary.calls() == 2 && h.clock.Waiters() >= 2 })
	if len(h.killer.get()) != 1 {
		t.Errorf("kills = %v, want one", h.killedNames())
	}
	cancel()
}

func TestMgrWaitForPodsCleanup(t *testing.T) {
	pods := []*v1.Pod{pod("a"), pod("b")}
	run := func(h *mgrHarness, ctx context.Context, fn PodCleanedUpFunc) chan struct{} {
		done := make(chan struct{})
		go func() {
			h.m.waitForPodsCleanup(ctx, fn, pods)
			close(done)
		}()
		return done
	}
	isDone := func(done chan struct{}) bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	}

	t.Run("returns once every pod is cleaned up", func(t *testing.T) {
		h := mgrNewHarness(t, Config{}, false, nil)
		var cleanA, cleanB atomic.Bool
		var checks atomic.Int32
		done := run(h, context.Background(), func(p *v1.Pod) bool {
			checks.Add(1)
			if p.Name == "a" {
				return cleanA.Load()
			}
			return cleanB.Load()
		})
		mgrEventually(t, "timer and ticker", func() bool { return h.clock.Waiters() >= 2 })
		for i, step := range []func(){func() {}, func() { cleanA.Store(true) }} {
			step()
			n := checks.Load()
			h.clock.Step(time.Second)
			mgrEventually(t, "a cleanup check", func() bool { return checks.Load() > n })
			mgrConsistently(t, fmt.Sprintf("waiting at step %d before every pod was cleaned up", i), 20*time.Millisecond, func() bool { return !isDone(done) })
		}
		cleanB.Store(true)
		mgrEventually(t, "return after cleanup", func() bool {
			if isDone(done) {
				return true
			}
			h.clock.Step(time.Second)
			return false
		})
	})
	t.Run("returns on timeout", func(t *testing.T) {
		h := mgrNewHarness(t, Config{}, false, nil)
		done := run(h, context.Background(), func(*v1.Pod) bool { return false })
		mgrEventually(t, "timer and ticker", func() bool { return h.clock.Waiters() >= 2 })
		h.clock.Step(podCleanupTimeout - time.Second)
		mgrConsistently(t, "waiting before the timeout", 20*time.Millisecond, func() bool { return !isDone(done) })
		h.clock.Step(time.Second)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("did not return after the cleanup timeout")
		}
	})
	t.Run("returns when ctx is done", func(t *testing.T) {
		h := mgrNewHarness(t, Config{}, false, nil)
		ctx, cancel := context.WithCancel(context.Background())
		done := run(h, ctx, func(*v1.Pod) bool { return false })
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("did not return after ctx was cancelled")
		}
	})
}

// Passes, pressure queries and admission run concurrently in the kubelet;
// run them together under -race.
func TestMgrConcurrentUse(t *testing.T) {
	pods, st := mgrMemoryPods()
	h := mgrNewHarness(t, mgrMemoryConfig(), true, mgrMemoryPressureNode().summary(mgrEpoch, st...))
	h.pods = pods
	pressured := mgrMemoryPressureNode().summary(mgrEpoch, st...)
	healthy := fakeHealthyNode().summary(mgrEpoch, st...)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				if _, err := h.m.synchronize(context.Background(), h.disk, h.activePods); err != nil {
					t.Errorf("synchronize: %v", err)
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for j := 0; j < 50; j++ {
			src := healthy
			if j%2 == 0 {
				src = pressured
			}
			s := fakeCopySummary(src)
			fakeStampSummaryAt(s, mgrEpoch.Add(time.Duration(j)*time.Second))
			h.summary.set(s)
			h.clock.Step(time.Second)
		}
	}()
	var readers sync.WaitGroup
	readers.Add(1)
	go func() {
		defer readers.Done()
		be := pod("be")
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = h.m.IsUnderMemoryPressure()
			_ = h.m.IsUnderDiskPressure()
			_ = h.m.IsUnderPIDPressure()
			_ = mgrAdmit(h, be)
		}
	}()
	wg.Wait()
	close(stop)
	readers.Wait()
}

func fakeStampSummaryAt(s *statsapi.Summary, ts time.Time) {
	fakeStampSummary(s, metav1.NewTime(ts))
}

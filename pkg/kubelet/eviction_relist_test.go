package kubelet

import (
	"errors"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
)

// relistCounter counts relist requests and hands each on to a channel.
type relistCounter struct {
	mu   sync.Mutex
	uids []types.UID
	each chan struct{}
}

func newRelistCounter() *relistCounter { return &relistCounter{each: make(chan struct{}, 100)} }

func (r *relistCounter) RequestRelist(_ klog.Logger, podUID types.UID) {
	r.mu.Lock()
	r.uids = append(r.uids, podUID)
	r.mu.Unlock()
	r.each <- struct{}{}
}

func (r *relistCounter) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.uids)
}

// awaitRelist waits for the next relist request.
func (r *relistCounter) awaitRelist(t *testing.T) {
	t.Helper()
	select {
	case <-r.each:
	case <-time.After(10 * time.Second):
		t.Fatal("no relist request came")
	}
}

// fakeWorker is a kill whose pod worker the test drives: each step is a
// call from the test, run inside the kill; do returns once it ran.
type fakeWorker struct {
	steps chan func(statusFn func(*v1.PodStatus)) error
	ran   chan struct{}
}

func (w *fakeWorker) do(step func(statusFn func(*v1.PodStatus)) error) {
	w.steps <- step
	<-w.ran
}

func (w *fakeWorker) kill(t *testing.T, wantGrace *int64) func(*v1.Pod, bool, *int64, func(*v1.PodStatus)) error {
	return func(_ *v1.Pod, isEvicted bool, grace *int64, statusFn func(*v1.PodStatus)) error {
		if !isEvicted || grace != wantGrace {
			t.Errorf("kill got isEvicted=%v gracePeriodOverride=%p, want true and %p", isEvicted, grace, wantGrace)
		}
		for step := range w.steps {
			err := step(statusFn)
			w.ran <- struct{}{}
			if err != nil {
				return err
			}
		}
		return nil
	}
}

// awaitTicker waits until the relisting goroutine's ticker exists (a
// fake ticker stays a waiter of the clock once created).
func awaitTicker(t *testing.T, clk *testingclock.FakeClock) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !clk.HasWaiters() {
		if time.Now().After(deadline) {
			t.Fatal("the relisting goroutine made no ticker")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestEvictionKillRelistsUntilTheWorkerStarts(t *testing.T) {
	logger, _ := ktesting.NewTestContext(t)
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "hog", Namespace: "ns", UID: "uid-1"}}
	grace := int64(1)
	errTimeout := errors.New("timeout waiting to kill pod")

	for _, tc := range []struct {
		name string
		// ticksBeforeStart: intervals that pass with the worker still in
		// an earlier sync; then it calls the status function (start), or
		// the kill returns without (no statusFn, or killErr).
		ticksBeforeStart int
		noStatusFn       bool
		killErr          error
	}{
		{name: "worker idle: one relist, the worker starts at once"},
		{name: "worker in a sync for three intervals: a relist each interval until it starts", ticksBeforeStart: 3},
		{name: "kill fails before the worker starts: relists stop at the return", ticksBeforeStart: 2, killErr: errTimeout},
		{name: "no status function: passed on as nil, relists stop at the return", ticksBeforeStart: 2, noStatusFn: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(time.Unix(1000, 0))
			relists := newRelistCounter()
			w := &fakeWorker{steps: make(chan func(func(*v1.PodStatus)) error), ran: make(chan struct{})}
			var statusFn func(*v1.PodStatus)
			gotStatus := 0
			if !tc.noStatusFn {
				statusFn = func(*v1.PodStatus) { gotStatus++ }
			}
			done := make(chan error, 1)
			go func() {
				done <- relistUntilKillStarts(logger, relists, clk, w.kill(t, &grace))(pod, true, &grace, statusFn)
			}()

			relists.awaitRelist(t) // at the call
			for range tc.ticksBeforeStart {
				awaitTicker(t, clk)
				clk.Step(evictionRelistInterval)
				relists.awaitRelist(t)
			}
			w.do(func(fn func(*v1.PodStatus)) error {
				if tc.noStatusFn {
					if fn != nil {
						t.Error("the kill got a status function where there was none")
					}
					return nil
				}
				if tc.killErr != nil {
					return tc.killErr
				}
				fn(&v1.PodStatus{})
				return nil
			})
			if tc.killErr == nil && !tc.noStatusFn {
				// The worker has started: time passing brings no more
				// relists while it still kills.
				clk.Step(evictionRelistInterval)
				clk.Step(evictionRelistInterval)
				w.do(func(fn func(*v1.PodStatus)) error { fn(&v1.PodStatus{}); return nil })
			}
			close(w.steps)
			if err := <-done; !errors.Is(err, tc.killErr) {
				t.Errorf("error %v, want %v", err, tc.killErr)
			}
			// The relisting goroutine has ended when the kill returns:
			// nothing more comes.
			clk.Step(evictionRelistInterval)
			if got, want := relists.count(), 1+tc.ticksBeforeStart; got != want {
				t.Errorf("%d relist requests, want %d", got, want)
			}
			for _, uid := range relists.uids {
				if uid != pod.UID {
					t.Errorf("relist of %q, want %q", uid, pod.UID)
				}
			}
			if want := map[bool]int{true: 0, false: 2}[tc.noStatusFn || tc.killErr != nil]; gotStatus != want {
				t.Errorf("status function called %d times, want %d", gotStatus, want)
			}
		})
	}
}

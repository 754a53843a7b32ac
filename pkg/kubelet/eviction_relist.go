package kubelet

import (
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/evictkit/evictkit/pkg/kubelet/eviction"
)

// evictionRelistInterval is how often an eviction kill asks for a relist
// of its pod until the pod worker takes the kill up.
const evictionRelistInterval = 50 * time.Millisecond

// podRelister is what an eviction kill needs of the PLEG: an on-demand
// relist of one pod.
type podRelister interface {
	RequestRelist(logger klog.Logger, podUID types.UID)
}

// relistUntilKillStarts returns kill, with on-demand relists of the pod
// requested from the call until the pod worker starts the termination.
//
// A pod worker handed a kill first finishes the sync it is in, then waits
// for a cached pod status newer than the end of that sync, so that it
// knows which containers run. When the sync was recent, as it is for a
// pod that started a moment ago, such a status comes with the next
// periodic relist, up to a second later: time enough for a workload
// allocating fast to reach its limit, so that the kernel OOM killer ends
// it before the kubelet does. A relist requested at the kill's call is
// not enough when the worker is still in a sync: the status it brings is
// older than that sync's end. So relists are requested every
// evictionRelistInterval until the worker reports the pod's terminating
// status (its first call of the status function, which it makes before it
// stops any container) or the kill returns. statusFn nil is passed on as
// nil, and then only the kill's return ends the relists.
func relistUntilKillStarts(logger klog.Logger, pleg podRelister, clk clock.WithTicker, kill eviction.KillPodFunc) eviction.KillPodFunc {
	return func(pod *v1.Pod, isEvicted bool, gracePeriodOverride *int64, statusFn func(*v1.PodStatus)) error {
		started := make(chan struct{})
		var startedOnce sync.Once
		workerStatusFn := statusFn
		if statusFn != nil {
			workerStatusFn = func(s *v1.PodStatus) {
				startedOnce.Do(func() { close(started) })
				statusFn(s)
			}
		}
		returned := make(chan struct{})
		relisting := make(chan struct{})
		go func() {
			defer close(relisting)
			ticker := clk.NewTicker(evictionRelistInterval)
			defer ticker.Stop()
			for {
				pleg.RequestRelist(logger, pod.UID)
				select {
				case <-started:
					return
				case <-returned:
					return
				case <-ticker.C():
					// A tick that comes with the start or the return
					// asks for nothing more.
					select {
					case <-started:
						return
					case <-returned:
						return
					default:
					}
				}
			}
		}()
		err := kill(pod, isEvicted, gracePeriodOverride, workerStatusFn)
		close(returned)
		<-relisting
		return err
	}
}

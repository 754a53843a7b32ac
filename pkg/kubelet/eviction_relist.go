package kubelet

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/evictkit/evictkit/pkg/kubelet/eviction"
)

// podRelister is what an eviction kill needs of the PLEG: an on-demand
// relist of one pod.
type podRelister interface {
	RequestRelist(logger klog.Logger, podUID types.UID)
}

// relistThenKill returns kill, preceded by a request to relist the pod.
//
// A pod worker handed a kill first waits for a cached pod status newer
// than its last sync, so that it knows which containers run. When that
// sync was recent, as it is for a pod that started a moment ago, such a
// status comes with the next periodic relist, up to a second later: time
// enough for a workload allocating fast to reach its limit, so that the
// kernel OOM killer ends it before the kubelet does. The relist requested
// here refreshes the pod's status at once. A pod worker that is still in
// a sync when the kill comes waits for the periodic relist as before.
func relistThenKill(logger klog.Logger, pleg podRelister, kill eviction.KillPodFunc) eviction.KillPodFunc {
	return func(pod *v1.Pod, isEvicted bool, gracePeriodOverride *int64, statusFn func(*v1.PodStatus)) error {
		pleg.RequestRelist(logger, pod.UID)
		return kill(pod, isEvicted, gracePeriodOverride, statusFn)
	}
}

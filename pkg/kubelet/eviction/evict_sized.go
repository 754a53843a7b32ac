//evictkit:file EvictionReclaimSized

package eviction

import (
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// evictConcurrently evicts several victims at once, so that the pass takes
// as long as the slowest kill rather than the sum of them (each kill waits
// for the pod's containers to stop). It returns the victims it attempted,
// in rank order.
func (m *managerImpl) evictConcurrently(logger klog.Logger, target *reclaimTarget) []*v1.Pod {
	attempted := make([]bool, len(target.victims))
	var wg sync.WaitGroup
	for i := range target.victims {
		wg.Go(func() { attempted[i] = m.evictVictim(logger, target, &target.victims[i]) })
	}
	wg.Wait()
	var evicted []*v1.Pod
	for i := range target.victims {
		if attempted[i] {
			evicted = append(evicted, target.victims[i].pod)
		}
	}
	return evicted
}

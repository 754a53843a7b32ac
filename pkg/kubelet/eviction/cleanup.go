//evictkit:file wired

package eviction

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

const (
	// podCleanupTimeout bounds the wait for evicted pods to be cleaned up.
	podCleanupTimeout = 30 * time.Second
	// podCleanupPollFreq is how often cleanup is checked.
	podCleanupPollFreq = time.Second
)

// waitForPodsCleanup waits, on the manager's clock, until every pod is
// cleaned up, podCleanupTimeout passes, or ctx is done.
func (m *managerImpl) waitForPodsCleanup(ctx context.Context, cleanedUp PodCleanedUpFunc, pods []*v1.Pod) {
	logger := klog.FromContext(ctx)
	timeout := m.clock.NewTimer(podCleanupTimeout)
	defer timeout.Stop()
	poll := m.clock.NewTicker(podCleanupPollFreq)
	defer poll.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timeout.C():
			logger.Info("Eviction manager: timed out waiting for pods to be cleaned up", "pods", klog.KObjSlice(pods))
			return
		case <-poll.C():
			if allCleanedUp(cleanedUp, pods) {
				logger.Info("Eviction manager: pods successfully cleaned up", "pods", klog.KObjSlice(pods))
				return
			}
		}
	}
}

// allCleanedUp reports whether every pod is cleaned up.
func allCleanedUp(cleanedUp PodCleanedUpFunc, pods []*v1.Pod) bool {
	for _, p := range pods {
		if !cleanedUp(p) {
			return false
		}
	}
	return true
}

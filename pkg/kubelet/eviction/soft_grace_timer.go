//evictkit:file EvictionSoftGraceTimer

package eviction

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// evictionSoftGraceTimer: the monitoring loop wakes when a soft
// threshold's grace period expires; on for a manager only with a soft
// threshold configured.
const evictionSoftGraceTimer featuregate.Feature = "EvictionSoftGraceTimer"

var _ = addAlphaFeature(alphaFeature{
	gate:     evictionSoftGraceTimer,
	requires: hasSoftThreshold,
	init:     func(m *managerImpl) { m.graceChanged = make(chan struct{}, 1) },
	// Any pass may have started a grace period (a memory notifier's among
	// them): the loop's wait is measured again.
	decided: func(m *managerImpl, _ klog.Logger, _ []*v1.Pod, _ podStatsIndex, _ *decision) bool {
		m.graceStateChanged()
		return false
	},
})

// Soft grace timer (EvictionSoftGraceTimer, alpha): without it a soft
// threshold acts at the first monitoring pass after its grace period
// expires, up to a whole interval (10 s by default) late. With it the
// loop waits until the earlier of the interval and the first expiry the
// core's state holds (graceExpiry), so the threshold acts at its grace.
// The threshold's grace still starts at the pass that first sees it met:
// how soon that is depends on the interval and on memory notifiers.

// hasSoftThreshold reports whether any threshold has a grace period.
func hasSoftThreshold(thresholds []evictionapi.Threshold) bool {
	for _, t := range thresholds {
		if !isHardEvictionThreshold(t) {
			return true
		}
	}
	return false
}

// graceExpiry returns the index of the threshold whose grace period
// expires first among those met and still within it, and when it
// expires; ok is false when no threshold is waiting out its grace. Ties go
// to the lower index.
func graceExpiry(thresholds []evictionapi.Threshold, s *decisionState) (index int, at time.Time, ok bool) {
	for i, t := range thresholds {
		if isHardEvictionThreshold(t) || i >= len(s.firstMet) || s.firstMet[i].IsZero() || (i < len(s.acting) && s.acting[i]) {
			continue
		}
		expiry := s.firstMet[i].Add(t.GracePeriod)
		if !ok || expiry.Before(at) {
			index, at, ok = i, expiry, true
		}
	}
	return index, at, ok
}

// untilNextPass is how long the loop waits at now for a pass due at
// deadline (the interval's end), given the first grace expiry (when
// expiring): the earlier of the two, never negative.
func untilNextPass(now, deadline, expiry time.Time, expiring bool) time.Duration {
	next := deadline
	if expiring && expiry.Before(next) {
		next = expiry
	}
	return max(next.Sub(now), 0)
}

// waitUntilNextPass waits for the monitoring interval to pass, or for the
// first grace period to expire if sooner; a pass that changes the state
// meanwhile has the wait measured again. It returns early when ctx is done.
func (m *managerImpl) waitUntilNextPass(ctx context.Context, interval time.Duration) {
	logger := klog.FromContext(ctx)
	deadline := m.clock.Now().Add(interval)
	for {
		m.syncMu.Lock()
		i, expiry, expiring := graceExpiry(m.config.Thresholds, &m.state)
		var t evictionapi.Threshold
		if expiring {
			t = m.config.Thresholds[i]
		}
		m.syncMu.Unlock()
		now := m.clock.Now()
		wait := untilNextPass(now, deadline, expiry, expiring)
		if expiring && !expiry.After(deadline) && !expiry.Equal(m.graceAnnounced) {
			m.graceAnnounced = expiry
			logger.Info("Eviction manager: next pass at a soft threshold's grace expiry", "threshold", describeThreshold(t), "expiresAt", expiry, "in", wait)
		}
		timer := m.clock.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C():
			return
		case <-m.graceChanged:
			timer.Stop()
		}
	}
}

// graceStateChanged tells a waiting monitoring loop that a pass changed
// the state its wait was measured on.
func (m *managerImpl) graceStateChanged() {
	select {
	case m.graceChanged <- struct{}{}:
	default:
	}
}

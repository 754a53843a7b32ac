//evictkit:file EvictionHardDuringSoft

package eviction

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// evictionHardDuringSoft: a soft eviction's kill runs in the background,
// and a hard threshold met during its grace period acts at once.
const evictionHardDuringSoft featuregate.Feature = "EvictionHardDuringSoft"

var _ = addAlphaFeature(alphaFeature{
	gate:     evictionHardDuringSoft,
	requires: hasSoftThreshold,
	// The core learns which of its soft victims the kubelet has cleaned up.
	input: func(m *managerImpl, in *decideInput) { in.softCleanedUp = m.softCleanupReport() },
	decided: func(_ *managerImpl, logger klog.Logger, _ []*v1.Pod, _ podStatsIndex, d *decision) bool {
		if len(d.heldForSoft) > 0 {
			logger.Info(heldForSoftMessage, "pods", klog.KObjSlice(d.heldForSoft))
		}
		return false
	},
})

// What a pass logs when it holds soft thresholds back, and when it starts
// a soft eviction in the background.
const (
	heldForSoftMessage  = "Eviction manager: a soft eviction is still terminating; soft thresholds wait for it, hard ones do not"
	inBackgroundMessage = "Eviction manager: soft eviction runs in the background; hard thresholds act meanwhile"
)

// Hard during soft (EvictionHardDuringSoft, alpha): upstream's pass waits
// for a soft eviction's kill, the pod's whole grace period (up to
// evictionMaxPodGracePeriod), and then for its cleanup; a hard threshold
// met meanwhile waits too (kubernetes#124081). With the gate the kill of
// a soft threshold's victims runs in the background and the monitoring
// loop goes on. Until those victims are cleaned up, soft thresholds evict
// no one else, as upstream's one-at-a-time; hard thresholds act as they
// would on an idle node, with a hard eviction's 1 s grace, which also
// shortens the kill of a soft victim the hard threshold ranks first. The
// hold ends at the latest when upstream's wait would have: the kill's
// timeout (1.5 × the grace period, at least 10 s) plus podCleanupTimeout.

// softKillBound is how long upstream's pass can block on a soft eviction
// with the given grace period: its kill's timeout, then the cleanup wait.
func softKillBound(grace int64) time.Duration {
	return time.Duration(max(grace+grace/2, 10))*time.Second + podCleanupTimeout
}

// softStillInFlight returns prev's soft victims not yet cleaned up at now
// and when their hold ends; none once it has.
func softStillInFlight(prev *decisionState, cleanedUp map[*v1.Pod]bool, now time.Time) ([]*v1.Pod, time.Time) {
	if len(prev.softInFlight) == 0 || !now.Before(prev.softHoldUntil) {
		return nil, time.Time{}
	}
	kept := notCleanedUp(prev.softInFlight, cleanedUp)
	if len(kept) == 0 {
		return nil, time.Time{}
	}
	return kept, prev.softHoldUntil
}

// hardOnly keeps the hard thresholds of actionable (indices into
// thresholds), in order.
func hardOnly(thresholds []evictionapi.Threshold, actionable []int) []int {
	var out []int
	for _, i := range actionable {
		if isHardEvictionThreshold(thresholds[i]) {
			out = append(out, i)
		}
	}
	return out
}

// killsInBackground reports whether a target's victims are killed in the
// background: those of a soft threshold, with the gate on (a dry run
// kills no one, so it has nothing to run there).
func killsInBackground(alpha alphaGates, target *reclaimTarget) bool {
	return alpha[evictionHardDuringSoft] && !alpha[evictionDryRun] &&
		!isHardEvictionThreshold(target.threshold) && len(target.victims) > 0
}

// softKill is what advance records of a soft eviction running in the
// background: the longest grace period among its victims.
type softKill struct {
	grace int64
}

// softCleanupReport says which of the soft victims the core remembers
// (state.softInFlight) the kubelet has cleaned up.
func (m *managerImpl) softCleanupReport() map[*v1.Pod]bool {
	return cleanedUpAmong(m.state.softInFlight, m.podCleanedUp)
}

// evictInBackground starts the kill of a soft threshold's victims and
// returns at once; the core holds soft thresholds until they are cleaned
// up (advance). It returns nil: the loop does not wait for them.
func (m *managerImpl) evictInBackground(logger klog.Logger, target *reclaimTarget) []*v1.Pod {
	var pods []*v1.Pod
	var grace int64
	for i := range target.victims {
		pods = append(pods, target.victims[i].pod)
		grace = max(grace, target.victims[i].gracePeriodSeconds)
	}
	m.state = m.state.advance(outcome{signal: target.threshold.Signal, evicted: pods, at: m.clock.Now(), soft: &softKill{grace: grace}})
	logger.Info(inBackgroundMessage, "pods", klog.KObjSlice(pods), "gracePeriod", grace)
	go m.evictVictims(logger, target)
	return nil
}

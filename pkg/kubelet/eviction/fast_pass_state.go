//evictkit:file EvictionFastPath

package eviction

import (
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// What a fast path (EvictionFastPath for memory, EvictionDiskFastPath for
// disk) leaves in the decision state. A fast pass sees fresh figures of
// one condition's signals only; the pods it evicts are remembered until
// the kubelet has cleaned them up, so that no pass evicts more for the
// same signals while what they hold is being freed.

// podsInFlight are pods evicted for one condition's signals that the
// kubelet has not cleaned up yet, and when the last of them was evicted.
type podsInFlight struct {
	pods []*v1.Pod
	at   time.Time
}

// signalConditionIndex returns the position in conditionOrder of the
// condition a signal reports, or -1 for an unknown signal.
func signalConditionIndex(signal evictionapi.Signal) int {
	id, ok := lookupSignal(signal)
	if !ok {
		return -1
	}
	return conditionIndex(signalTable[id].condition)
}

// fastPassState is the state a fast pass leaves behind. It saw fresh
// figures for cond's signals only, so it takes the decision's state for
// their thresholds and for cond, and keeps prev's for every other
// threshold and condition (their grace periods, minimum reclaim and
// condition times are the monitoring loop's). It records at, the time of
// the figures it decided on, so that stats of cond's signals older than
// them never drive an eviction again.
func fastPassState(thresholds []evictionapi.Threshold, prev *decisionState, next decisionState, cond v1.NodeConditionType, at time.Time) decisionState {
	out := next
	out.firstMet, out.acting = slices.Clone(next.firstMet), slices.Clone(next.acting)
	c := conditionIndex(cond)
	for i, t := range thresholds {
		if signalConditionIndex(t.Signal) == c || i >= len(prev.firstMet) || i >= len(out.firstMet) {
			continue
		}
		out.firstMet[i], out.acting[i] = prev.firstMet[i], prev.acting[i]
	}
	for k := range conditionOrder {
		if k != c {
			out.conditionSeen[k], out.conditionKnown[k] = prev.conditionSeen[k], prev.conditionKnown[k]
		}
	}
	if c >= 0 {
		out.decidedAt[c] = at
	}
	return out
}

// stillTerminating returns the pods of prev that are not cleaned up at
// now, with prev's time; it forgets them all once podCleanupTimeout has
// passed since then.
func stillTerminating(prev podsInFlight, cleanedUp map[*v1.Pod]bool, now time.Time) podsInFlight {
	if len(prev.pods) == 0 || now.Sub(prev.at) > podCleanupTimeout {
		return podsInFlight{}
	}
	kept := notCleanedUp(prev.pods, cleanedUp)
	if len(kept) == 0 {
		return podsInFlight{}
	}
	return podsInFlight{pods: kept, at: prev.at}
}

// notCleanedUp returns the pods that cleanedUp does not list, in order.
func notCleanedUp(pods []*v1.Pod, cleanedUp map[*v1.Pod]bool) []*v1.Pod {
	var kept []*v1.Pod
	for _, p := range pods {
		if !cleanedUp[p] {
			kept = append(kept, p)
		}
	}
	return kept
}

// allInFlight returns the pods of every condition's podsInFlight.
func allInFlight(s *decisionState) []*v1.Pod {
	var out []*v1.Pod
	for c := range s.inFlight {
		out = append(out, s.inFlight[c].pods...)
	}
	return out
}

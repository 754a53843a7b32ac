package eviction

import (
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// decisionState is what the decision core carries from one pass to the
// next. Thresholds are identified by their index in the configured list,
// which does not change once the filesystem layout is known.
type decisionState struct {
	// firstMet[i] is when threshold i was first seen met, ignoring its
	// grace period; it is zero while the threshold is not met.
	firstMet []time.Time
	// acting[i] is set while threshold i has met its grace period and has
	// not yet recovered past its minimum reclaim.
	acting []bool
	// conditionSeen[c] is when condition conditionOrder[c] was last
	// observed; conditionKnown[c] says whether it ever was.
	conditionSeen  [len(conditionOrder)]time.Time
	conditionKnown [len(conditionOrder)]bool
	// lastObservations are the observations of the previous pass.
	lastObservations *observationSet
	//evictkit:begin EvictionFastPath
	// decidedAt[c] is the time of the fresh figures the last fast pass
	// for condition conditionOrder[c]'s signals decided on: stats of those
	// signals from before it never drive an eviction again. Zero where no
	// fast path runs.
	decidedAt [len(conditionOrder)]time.Time
	// inFlight[c] are the pods evicted for condition c's signals, while a
	// fast path watches them (fast_pass_state.go), that the kubelet has not
	// cleaned up yet: while any is terminating, no pass evicts for those
	// signals, as what the pods hold is about to be freed.
	inFlight [len(conditionOrder)]podsInFlight
	//evictkit:end EvictionFastPath
	//evictkit:begin EvictionHardDuringSoft
	// softInFlight are the pods a soft threshold evicted in the background
	// that the kubelet has not cleaned up yet, and softHoldUntil when the
	// soft thresholds stop waiting for them anyway (hard_during_soft.go).
	softInFlight  []*v1.Pod
	softHoldUntil time.Time
	//evictkit:end EvictionHardDuringSoft
	// settleFrom is when a pass last evicted for a threshold whose signal
	// family settles after an eviction (signalRule.settling).
	settleFrom time.Time
}

// newDecisionState returns the state before the first pass for n thresholds.
func newDecisionState(n int) decisionState {
	return decisionState{firstMet: make([]time.Time, n), acting: make([]bool, n)}
}

// conditions returns the node conditions observed within period of now, in
// conditionOrder.
func (s *decisionState) conditions(period time.Duration, now time.Time) []v1.NodeConditionType {
	var out []v1.NodeConditionType
	for c := range conditionOrder {
		if s.conditionKnown[c] && now.Sub(s.conditionSeen[c]) < period {
			out = append(out, conditionOrder[c])
		}
	}
	return out
}

// evaluation is the outcome of comparing observations against thresholds.
type evaluation struct {
	// next is the state to carry into the next pass.
	next decisionState
	// conditions are the node conditions to report, in conditionOrder.
	conditions []v1.NodeConditionType
	// actionable are the indices of thresholds that met their grace period
	// and whose signal has fresh stats, in reclaim order.
	actionable []int
}

// evaluate compares observations with thresholds. A threshold is met when
// its signal is below its level; once acting, it stays met until the signal
// recovers past level plus minimum reclaim. It acts once met for its grace
// period, and drives eviction only when its signal's stats are newer than
// at the previous pass.
func evaluate(thresholds []evictionapi.Threshold, prev *decisionState, obs *observationSet, transition time.Duration, now time.Time) evaluation {
	next := newDecisionState(len(thresholds))
	next.conditionSeen, next.conditionKnown = prev.conditionSeen, prev.conditionKnown
	next.lastObservations = obs
	//evictkit:begin EvictionFastPath
	next.decidedAt = prev.decidedAt
	//evictkit:end EvictionFastPath
	next.settleFrom = prev.settleFrom

	var actionable []int
	heldOnly := make([]bool, len(thresholds))
	for i, t := range thresholds {
		ob, ok := obs.get(t.Signal)
		if !ok {
			continue
		}
		wasActing := i < len(prev.acting) && prev.acting[i]
		heldOnly[i] = !signalBelow(t, ob, false)
		if heldOnly[i] && !(wasActing && signalBelow(t, ob, true)) {
			continue
		}
		first := now
		if i < len(prev.firstMet) && !prev.firstMet[i].IsZero() {
			first = prev.firstMet[i]
		}
		next.firstMet[i] = first
		if id, ok := lookupSignal(t.Signal); ok {
			c := conditionIndex(signalTable[id].condition)
			next.conditionSeen[c], next.conditionKnown[c] = now, true
		}
		if now.Sub(first) < t.GracePeriod {
			continue
		}
		next.acting[i] = true
		fresh := statsAreFresh(t.Signal, ob, prev.lastObservations)
		//evictkit:begin EvictionFastPath
		if c := signalConditionIndex(t.Signal); c >= 0 && !prev.decidedAt[c].IsZero() && !ob.time.After(prev.decidedAt[c]) {
			fresh = false
		}
		//evictkit:end EvictionFastPath
		if settling := ruleOf(t.Signal).settling; settling != nil && !prev.settleFrom.IsZero() {
			var last *observation
			if prev.lastObservations != nil {
				if o, ok := prev.lastObservations.get(t.Signal); ok {
					last = &o
				}
			}
			if settling(now.Sub(prev.settleFrom), last, ob) {
				fresh = false
			}
		}
		if fresh {
			actionable = append(actionable, i)
		}
	}
	sortByReclaimOrder(thresholds, heldOnly, actionable)
	return evaluation{next: next, conditions: next.conditions(transition, now), actionable: actionable}
}

// signalBelow reports whether an observation meets a threshold; with
// reclaim set, the level includes the threshold's minimum reclaim.
func signalBelow(t evictionapi.Threshold, ob observation, reclaim bool) bool {
	r := ruleOf(t.Signal)
	return t.Operator == r.operator && r.met(t, ob, reclaim)
}

// statsAreFresh reports whether a signal's observation is newer than the
// previous one (or either has no time).
func statsAreFresh(signal evictionapi.Signal, ob observation, last *observationSet) bool {
	if last == nil || ob.time.IsZero() {
		return true
	}
	prev, ok := last.get(signal)
	return !ok || ob.time.After(prev.time)
}

// sortByReclaimOrder orders threshold indices: memory signals first, as
// upstream sorts them; then thresholds met now before those held only by
// their minimum reclaim (heldOnly, by threshold index); then signal-table
// position, hard before soft (shorter grace first), configuration order.
// Upstream leaves all but "memory first" to map iteration, whose order
// favours the thresholds met now: this is its most frequent outcome.
func sortByReclaimOrder(thresholds []evictionapi.Threshold, heldOnly []bool, idx []int) {
	sort.SliceStable(idx, func(a, b int) bool {
		ta, tb := thresholds[idx[a]], thresholds[idx[b]]
		sa, _ := lookupSignal(ta.Signal)
		sb, _ := lookupSignal(tb.Signal)
		ma, mb := signalResource(ta.Signal) == v1.ResourceMemory, signalResource(tb.Signal) == v1.ResourceMemory
		if ma != mb {
			return ma
		}
		if ha, hb := heldOnly[idx[a]], heldOnly[idx[b]]; !ma && ha != hb {
			return hb
		}
		if sa != sb {
			return sa < sb
		}
		if ta.GracePeriod != tb.GracePeriod {
			return ta.GracePeriod < tb.GracePeriod
		}
		return idx[a] < idx[b]
	})
}

// reclaimSatisfied reports whether, after node-level reclaim, no threshold
// is met any more counting minimum reclaim and ignoring grace periods.
func reclaimSatisfied(thresholds []evictionapi.Threshold, obs *observationSet) bool {
	for _, t := range thresholds {
		if ob, ok := obs.get(t.Signal); ok && signalBelow(t, ob, true) {
			return false
		}
	}
	return true
}

//evictkit:file decision

package eviction

import (
	"time"

	v1 "k8s.io/api/core/v1"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// What the shell reports back to the core after acting on a decision (as
// an application of etcd's raft reports with Advance): the core records
// the results of acting in its state, and re-plans after node-level
// reclaim. The shell never writes the state itself.

// outcome is what acting on a decision's target did.
type outcome struct {
	// signal is the target's threshold signal.
	signal evictionapi.Signal
	// evicted are the victims whose eviction was attempted.
	evicted []*v1.Pod
	// at is when.
	at time.Time
	//evictkit:begin EvictionFastPath
	// tracked: a fast path watches the signal's condition, and the pods
	// evicted for it are remembered until the kubelet has cleaned them up.
	tracked bool
	//evictkit:end EvictionFastPath
	//evictkit:begin EvictionHardDuringSoft
	// soft is set when the victims of a soft threshold are killed in the
	// background: they are remembered until the kubelet has cleaned them up.
	soft *softKill
	//evictkit:end EvictionHardDuringSoft
}

// advance returns the state after an outcome.
func (s decisionState) advance(o outcome) decisionState {
	if len(o.evicted) == 0 {
		return s
	}
	if ruleOf(o.signal).settling != nil {
		s.settleFrom = o.at
	}
	//evictkit:begin EvictionFastPath
	if c := signalConditionIndex(o.signal); o.tracked && c >= 0 {
		s.inFlight[c] = podsInFlight{pods: append(append([]*v1.Pod(nil), s.inFlight[c].pods...), o.evicted...), at: o.at}
	}
	//evictkit:end EvictionFastPath
	//evictkit:begin EvictionHardDuringSoft
	if o.soft != nil {
		s.softInFlight = append(append([]*v1.Pod(nil), s.softInFlight...), o.evicted...)
		s.softHoldUntil = o.at.Add(softKillBound(o.soft.grace))
	}
	//evictkit:end EvictionHardDuringSoft
	return s
}

// replan returns the target as it stands after node-level reclaim, given
// the observations made since, and whether those show every threshold
// relieved past its minimum reclaim (then nothing is evicted). The target
// passed in is not changed.
func replan(target *reclaimTarget, thresholds []evictionapi.Threshold, obs *observationSet) (*reclaimTarget, bool) {
	next := *target
	next.victims = append([]victim(nil), target.victims...)
	//evictkit:begin EvictionReclaimSized
	// What node-level reclaim freed need not be freed by evicting pods.
	if ob, ok := obs.get(next.threshold.Signal); ok {
		next.resize(ob)
	}
	//evictkit:end EvictionReclaimSized
	//evictkit:begin EvictionExplain
	// The victims left are explained by what is observed now.
	if next.decision != nil {
		explainVictims(&next, obs)
	}
	//evictkit:end EvictionExplain
	return &next, reclaimSatisfied(thresholds, obs)
}

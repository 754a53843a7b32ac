//evictkit:file EvictionExplain

package eviction

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2"
)

// evictionExplain: say in each Evicted event why this pod was chosen,
// and log the ranked pods with the decision.
const evictionExplain featuregate.Feature = "EvictionExplain"

var _ = addAlphaFeature(alphaFeature{gate: evictionExplain, evicting: logDecision})

// Explained decisions (feature gate EvictionExplain, alpha).
//
// Upstream's Evicted event says what the node was short of and what the
// pod used, but not why this pod and not another. With the gate on, each
// Evicted (or, in dry-run, WouldEvict) event's message ends with a
// decision clause in key=value form:
//
//	Decision: signal=memory.available observed=512Mi threshold=1Gi rank=1/4 rule=exceeds-request runnerUp=default/idle runnerUpRank=3
//
//   - signal, observed, threshold: the signal that drove the pass, its
//     observed value and the threshold's level (resolved against capacity
//     when given as a percentage);
//   - rank: the pod's place in the ranking (from 1) of all active pods;
//   - rule: the first ranking rule on which the pod went ahead of the
//     runner-up (see rankRule);
//   - runnerUp, runnerUpRank: the first evictable pod the pass spared,
//     the one this pod was chosen over ("none" when every evictable pod
//     was chosen, and rule is then only-candidate).
//
// The status message stays upstream's. A structured log line carries the
// whole decision with the first maxRankedInLog ranked pods.

// rankRule names the ranking rule that put one pod ahead of another.
type rankRule string

const (
	// ruleNoStats: the Summary API had no stats for the pod, and such
	// pods go first.
	ruleNoStats rankRule = "no-stats"
	// ruleExceedsRequest: its usage is above its request and the other's
	// is not.
	ruleExceedsRequest rankRule = "exceeds-request"
	// rulePriority: its priority is lower.
	rulePriority rankRule = "priority"
	// ruleUsage: it uses more above its request (for PID: more processes).
	ruleUsage rankRule = "usage"
	// ruleTieBreak: the pods tie on every rule and the fixed order by
	// namespace, name and UID decided.
	ruleTieBreak rankRule = "tie-break"
	// ruleOnlyCandidate: no evictable pod was left to compare with.
	ruleOnlyCandidate rankRule = "only-candidate"
)

// decidingRule returns the first rule on which a ranks ahead of b; it
// follows the steps of compareRank.
func decidingRule(a, b *candidate, class rankClass) rankRule {
	if a.tier(class) != b.tier(class) {
		if !a.hasStats {
			return ruleNoStats
		}
		return ruleExceedsRequest
	}
	if a.priority != b.priority {
		return rulePriority
	}
	if class == rankByProcesses && a.hasStats != b.hasStats {
		return ruleNoStats
	}
	if !a.hasStats || !b.hasStats || compareRank(a, b, class) == 0 {
		return ruleTieBreak
	}
	return ruleUsage
}

// explanation is why one victim was chosen.
type explanation struct {
	// rank is the victim's position in the ranking (from 0).
	rank int
	rule rankRule
	// runnerUp is the first evictable pod spared (rank runnerUpRank), or
	// nil.
	runnerUp     *v1.Pod
	runnerUpRank int
}

// decisionContext is what every explanation of a pass shares.
type decisionContext struct {
	signal              string
	observed, threshold string
	total               int
}

// explainVictims fills in the explanation of each of the target's victims
// and the pass's decision context, from the observations obs.
func explainVictims(target *reclaimTarget, obs *observationSet) {
	chosen := make(map[int]bool, len(target.victims))
	for _, v := range target.victims {
		chosen[v.rank] = true
	}
	runnerUp := -1
	for i := range target.ranked {
		if !target.ranked[i].critical && !chosen[i] {
			runnerUp = i
			break
		}
	}
	ctx := decisionContext{signal: string(target.threshold.Signal), observed: "unknown", threshold: describeThresholdValue(target.threshold.Value), total: len(target.ranked)}
	if ob, ok := obs.get(target.threshold.Signal); ok {
		ctx.observed, ctx.threshold = ruleOf(target.threshold.Signal).values(target.threshold, ob, target.resource)
	}
	target.decision = &ctx
	for k := range target.victims {
		v := &target.victims[k]
		e := &explanation{rank: v.rank, rule: ruleOnlyCandidate}
		if runnerUp >= 0 {
			e.runnerUp, e.runnerUpRank = target.ranked[runnerUp].pod, runnerUp
			e.rule = decidingRule(&target.ranked[v.rank], &target.ranked[runnerUp], target.class)
		}
		v.explanation = e
	}
}

// clause renders the decision clause appended to the event's message.
func (e *explanation) clause(ctx *decisionContext) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Decision: signal=%s observed=%s threshold=%s rank=%d/%d rule=%s",
		ctx.signal, ctx.observed, ctx.threshold, e.rank+1, ctx.total, e.rule)
	if e.runnerUp == nil {
		b.WriteString(" runnerUp=none")
	} else {
		fmt.Fprintf(&b, " runnerUp=%s runnerUpRank=%d", klog.KObj(e.runnerUp), e.runnerUpRank+1)
	}
	return b.String()
}

// withExplanation is an event message with the decision clause at its end
// (the message as it is when there is none).
func withExplanation(message, clause string) string {
	if clause == "" {
		return message
	}
	return strings.TrimSpace(message) + " " + clause
}

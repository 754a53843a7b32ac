//evictkit:file EvictionExplain

package eviction

import "k8s.io/klog/v2"

// rankedPod is one entry of the ranked list in the decision log line.
type rankedPod struct {
	Rank     int    `json:"rank"`
	Pod      string `json:"pod"`
	Critical bool   `json:"critical,omitempty"`
	Victim   bool   `json:"victim,omitempty"`
	Why      string `json:"why"`
}

// logDecision logs the whole decision of a pass with explanations: the
// signal, observed value and threshold, each victim's clause, and the first
// maxRankedInLog ranked pods with why each ranks where it does.
func logDecision(logger klog.Logger, target *reclaimTarget) {
	if target.decision == nil {
		return
	}
	victims := make(map[int]bool, len(target.victims))
	clauses := make([]string, 0, len(target.victims))
	for i := range target.victims {
		v := &target.victims[i]
		victims[v.rank] = true
		if v.explanation != nil {
			clauses = append(clauses, klog.KObj(v.pod).String()+": "+v.explanation.clause(target.decision))
		}
	}
	n := min(len(target.ranked), maxRankedInLog)
	ranked := make([]rankedPod, 0, n)
	for i := range n {
		c := &target.ranked[i]
		ranked = append(ranked, rankedPod{Rank: i + 1, Pod: klog.KObj(c.pod).String(), Critical: c.critical, Victim: victims[i], Why: c.reason(target.class)})
	}
	logger.Info("Eviction manager: decision", "signal", target.decision.signal, "observed", target.decision.observed,
		"threshold", target.decision.threshold, "rankedTotal", target.decision.total, "victims", clauses, "ranked", ranked)
}

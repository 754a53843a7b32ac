//evictkit:file EvictionExplain

package eviction

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"
)

// What EvictionExplain adds to the fuzz targets: its gate, on as the
// scenario's second alpha bit says; a victim's explanation, in the
// decision's summary and held to the reference model's; a path per
// deciding rule.
var _ = addFzAlphaFeature(fzAlphaFeature{
	order: 3,
	gate:  evictionExplain,
	on:    func(a fzGates) bool { return a.explain },
	model: func(g *refGates, on bool) { g.explain = on },
	victim: func(v victim) string {
		e := v.explanation
		if e == nil {
			return ""
		}
		runnerUp := "none"
		if e.runnerUp != nil {
			runnerUp = string(e.runnerUp.UID)
		}
		return fmt.Sprintf(" explain{rank=%d rule=%s runnerUp=%s@%d}", e.rank, e.rule, runnerUp, e.runnerUpRank)
	},
	checkVictim: func(in *decideInput, v victim, w refVictim, fail func(format string, args ...any)) {
		if !in.gates.alpha[evictionExplain] {
			if v.explanation != nil {
				fail("victim %s explained with EvictionExplain off", v.pod.UID)
			}
			return
		}
		e := v.explanation
		if e == nil {
			fail("victim %s has no explanation with EvictionExplain on", v.pod.UID)
		}
		runnerUp, runnerUpRank := types.UID(""), -1
		if e.runnerUp != nil {
			runnerUp, runnerUpRank = e.runnerUp.UID, e.runnerUpRank
		}
		if e.rank != w.rank || string(e.rule) != w.rule || runnerUp != w.runnerUp || runnerUpRank != w.runnerUpRank {
			fail("victim %s explained rank=%d rule=%s runnerUp=%s@%d, the model's rank=%d rule=%s runnerUp=%s@%d",
				v.pod.UID, e.rank, e.rule, runnerUp, runnerUpRank, w.rank, w.rule, w.runnerUp, w.runnerUpRank)
		}
	},
	targetPaths: func(t *reclaimTarget, paths map[string]bool) {
		for _, v := range t.victims {
			if v.explanation != nil {
				paths["explain-"+string(v.explanation.rule)] = true
			}
		}
	},
	promises: []string{
		"explain-no-stats",
		"explain-exceeds-request",
		"explain-priority",
		"explain-usage",
		"explain-tie-break",
		"explain-only-candidate",
	},
})

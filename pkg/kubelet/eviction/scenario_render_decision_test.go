//evictkit:file decision

package eviction

// How a scenario's decision pass and admissions are written.

import (
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// decisionRender is what an alpha feature writes of a decision: lines
// about the target (after its ranking) and about each victim (after its
// annotations). The feature's own test file registers it
// (addDecisionRender); either hook is optional.
type decisionRender struct {
	target func(b *strings.Builder, tg *reclaimTarget)
	victim func(b *strings.Builder, tg *reclaimTarget, v victim)
}

// decisionRenders are the registered features'.
var decisionRenders []decisionRender

func addDecisionRender(r decisionRender) bool {
	decisionRenders = append(decisionRenders, r)
	return true
}

// renderDecision writes the conditions, each threshold's state, the target
// with its ranking and victims, and any local storage victims.
func renderDecision(in *decideInput, d *decision) string {
	var b strings.Builder
	renderStates(&b, in.thresholds, d.conditions, &d.next)
	for _, v := range d.storageVictims {
		fmt.Fprintf(&b, "local storage victim %s (%s)\n  message: %q\n", v.pod.Name, v.limit, v.message)
	}
	tg := d.target
	if tg == nil {
		b.WriteString("target: none\n")
		return b.String()
	}
	steps := make([]string, 0, len(tg.steps))
	for _, s := range tg.steps {
		steps = append(steps, s.String())
	}
	fmt.Fprintf(&b, "target: %s, starving %s, node reclaim: %s\n", renderThreshold(tg.threshold), tg.resource, orNone(strings.Join(steps, ", ")))
	if len(tg.actionable) > 1 {
		var also []string
		for _, t := range tg.actionable[1:] {
			also = append(also, renderThreshold(t))
		}
		fmt.Fprintf(&b, "also actionable: %s\n", strings.Join(also, ", "))
	}
	if len(tg.ranked) == 0 {
		b.WriteString("ranking: none\n")
	} else {
		b.WriteString("ranking:\n")
	}
	for _, line := range strings.Split(strings.TrimSuffix(renderRanking(tg.ranked, tg.class), "\n"), "\n") {
		if line != "" {
			b.WriteString("  " + line + "\n")
		}
	}
	for _, r := range decisionRenders {
		if r.target != nil {
			r.target(&b, tg)
		}
	}
	if len(tg.victims) == 0 {
		b.WriteString("victims: none\n")
	}
	for _, v := range tg.victims {
		fmt.Fprintf(&b, "victim %s, rank %d, grace %ds\n  reason: %s\n  message: %q\n", v.pod.Name, v.rank+1, v.gracePeriodSeconds, v.reason, v.message)
		keys := make([]string, 0, len(v.annotations))
		for k := range v.annotations {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "  annotation %s: %q\n", k, v.annotations[k])
		}
		for _, r := range decisionRenders {
			if r.victim != nil {
				r.victim(&b, tg, v)
			}
		}
	}
	return b.String()
}

// renderAdmission writes one line per pod: admitted, or rejected with
// the reason and message a rejected pod gets.
func renderAdmission(conditions []v1.NodeConditionType, pods []*v1.Pod) string {
	var b strings.Builder
	for _, p := range pods {
		r := admitUnderPressure(klog.Background(), conditions, p, false)
		if r.Admit {
			fmt.Fprintf(&b, "%s: admitted\n", p.Name)
			continue
		}
		fmt.Fprintf(&b, "%s: rejected, %s: %q\n", p.Name, r.Reason, r.Message)
	}
	return b.String()
}

//evictkit:file EvictionExplain

package eviction

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2/ktesting"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// What EvictionExplain adds to the scenarios: the gate line gate explain,
// and each victim's explanation.
var (
	_ = addScenarioFeature(scenarioFeature{
		gate:    "explain",
		setGate: func(s *scenario) { s.gates.set(evictionExplain, true) },
	})
	_ = addDecisionRender(decisionRender{
		victim: func(b *strings.Builder, tg *reclaimTarget, v victim) {
			if v.explanation != nil {
				fmt.Fprintf(b, "  explained: %q\n", v.explanation.clause(tg.decision))
			}
		},
	})
)

func TestDecidingRule(t *testing.T) {
	mk := func(name string, hasStats, exceeds bool, prio int32, excess, usage int64) candidate {
		return candidate{pod: pod(name), hasStats: hasStats, exceeds: exceeds, priority: prio, excess: excess, usage: usage}
	}
	for _, tc := range []struct {
		name  string
		class rankClass
		a, b  candidate
		want  rankRule
	}{
		{"no stats before stats", rankByMemory, mk("a", false, false, 0, 0, 0), mk("b", true, true, -5, 10, 10), ruleNoStats},
		{"above request before within", rankByMemory, mk("a", true, true, 100, 1, 1), mk("b", true, false, 0, 0, 5), ruleExceedsRequest},
		{"lower priority, same tier", rankByMemory, mk("a", true, true, 0, 1, 1), mk("b", true, true, 10, 500, 500), rulePriority},
		{"larger excess", rankByDiskBytes, mk("a", true, true, 0, 500, 500), mk("b", true, true, 0, 1, 1), ruleUsage},
		{"equal on every rule", rankByMemory, mk("a", true, true, 0, 5, 5), mk("b", true, true, 0, 5, 5), ruleTieBreak},
		{"both without stats", rankByMemory, mk("a", false, false, 0, 0, 0), mk("b", false, false, 0, 0, 0), ruleTieBreak},
		{"PID: priority before stats", rankByProcesses, mk("a", true, false, 0, 0, 1), mk("b", false, false, 10, 0, 0), rulePriority},
		{"PID: no stats at equal priority", rankByProcesses, mk("a", false, false, 0, 0, 0), mk("b", true, false, 0, 0, 90), ruleNoStats},
		{"PID: more processes", rankByProcesses, mk("a", true, false, 0, 0, 90), mk("b", true, false, 0, 0, 10), ruleUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if compareRank(&tc.a, &tc.b, tc.class) > 0 {
				t.Fatalf("bad case: a does not rank ahead of b")
			}
			if got := decidingRule(&tc.a, &tc.b, tc.class); got != tc.want {
				t.Errorf("decidingRule = %s, want %s", got, tc.want)
			}
		})
	}
}

// decisionClause is the grammar of the clause, as an e2e test parses it.
var decisionClause = regexp.MustCompile(`Decision: signal=(\S+) observed=(\S+) threshold=(\S+) rank=(\d+)/(\d+) rule=(\S+) runnerUp=(\S+)(?: runnerUpRank=(\d+))?$`)

func TestExplainedEventMessage(t *testing.T) {
	setGateDuringTest(t, evictionExplain, true)
	pods, st := mgrMemoryPods()
	h := mgrNewHarness(t, mgrMemoryConfig(), false, mgrMemoryPressureNode().summary(mgrEpoch, st...))
	h.pods = pods
	evicted, logged := h.syncLogging()
	if got := podNames(evicted); !reflect.DeepEqual(got, []string{"besteffort"}) {
		t.Fatalf("evicted %v, want [besteffort]", got)
	}
	if !slices.Contains(logged, "Eviction manager: decision") {
		t.Errorf("the pass did not log its decision: %q", logged)
	}
	k := h.killer.get()[0]
	events := h.recorder.byReason(Reason)
	if len(events) != 1 {
		t.Fatalf("%d Evicted events, want 1", len(events))
	}
	ev := events[0]
	if !strings.HasPrefix(ev.message, strings.TrimSpace(k.status.Message)) {
		t.Errorf("event message %q does not start with the status message %q", ev.message, k.status.Message)
	}
	if strings.Contains(k.status.Message, "Decision:") {
		t.Errorf("status message %q carries the decision; it must stay upstream's", k.status.Message)
	}
	m := decisionClause.FindStringSubmatch(ev.message)
	if m == nil {
		t.Fatalf("event message %q has no decision clause", ev.message)
	}
	if m[1] != "memory.available" || m[4] != "1" || m[7] == "none" {
		t.Errorf("decision %q: want memory.available, rank 1 and a runner-up", m[0])
	}
}

// The decision log line: one clause per victim, and the ranked pods from 1
// with the victims marked.
func TestLogDecision(t *testing.T) {
	pods := []*v1.Pod{
		pod("greedy", withMemRequest("100Mi")),
		pod("modest", withMemRequest("100Mi")),
		pod("critical", withPriority(systemCritical), withMemRequest("100Mi")),
		pod("within", withMemRequest("2Gi")),
	}
	stats := []statsapi.PodStats{
		podStats("greedy", withWorkingSet("3Gi")),
		podStats("modest", withWorkingSet("600Mi")),
		podStats("critical", withWorkingSet("4Gi")),
		podStats("within", withWorkingSet("1Gi")),
	}
	// 2.5Gi below the 1Gi threshold: a shortfall of 3.5Gi, which greedy
	// (3Gi) and modest (600Mi) cover together.
	in := memoryInput(-(5 << 29), pods, stats...)
	in.gates.set(evictionExplain, true)
	in.gates.set(evictionReclaimSized, true)
	d := decide(in)
	if d.target == nil || len(d.target.victims) != 2 {
		t.Fatalf("want a target with two victims (greedy, modest): %+v", d.target)
	}
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	logDecision(logger, d.target)
	var entry *ktesting.LogEntry
	for _, e := range logger.GetSink().(ktesting.Underlier).GetBuffer().Data() {
		if e.Message == "Eviction manager: decision" {
			entry = &e
		}
	}
	if entry == nil {
		t.Fatal("no decision log line")
	}
	kv := map[string]any{}
	for i := 0; i+1 < len(entry.ParameterKVList); i += 2 {
		kv[entry.ParameterKVList[i].(string)] = entry.ParameterKVList[i+1]
	}
	clauses, _ := kv["victims"].([]string)
	if len(clauses) != 2 || !strings.HasPrefix(clauses[0], "ns/greedy: Decision: ") || !strings.HasPrefix(clauses[1], "ns/modest: Decision: ") {
		t.Errorf("victims %q, want greedy's then modest's clause", clauses)
	}
	ranked, _ := kv["ranked"].([]rankedPod)
	want := []rankedPod{
		{Rank: 1, Pod: "ns/greedy", Victim: true},
		{Rank: 2, Pod: "ns/modest", Victim: true},
		{Rank: 3, Pod: "ns/critical", Critical: true},
		{Rank: 4, Pod: "ns/within"},
	}
	if len(ranked) != len(want) {
		t.Fatalf("ranked %+v, want %d pods", ranked, len(want))
	}
	for i, w := range want {
		got := ranked[i]
		got.Why = ""
		if got != w {
			t.Errorf("ranked[%d] = %+v, want %+v", i, got, w)
		}
	}
	if kv["signal"] != "memory.available" || kv["rankedTotal"] != 4 {
		t.Errorf("signal %v, rankedTotal %v", kv["signal"], kv["rankedTotal"])
	}
}

func TestReplanExplainsWhatIsObservedNow(t *testing.T) {
	pods := []*v1.Pod{pod("a"), pod("b")}
	in := memoryInput(512*mi, pods, podStats("a", withWorkingSet("300Mi")), podStats("b", withWorkingSet("200Mi")))
	in.gates.set(evictionExplain, true)
	d := decide(in)
	before := d.target.victims[0].explanation
	next, _ := replan(d.target, in.thresholds, observations(ob{signal: sigMem, available: 900 * mi, capacity: 8 << 30, at: t0}))
	if next.decision == nil || next.decision.observed != "900Mi" {
		t.Fatalf("after reclaim the decision says observed %+v, want 900Mi", next.decision)
	}
	if d.target.decision.observed != "512Mi" || d.target.victims[0].explanation != before {
		t.Errorf("replan changed the first decision: observed %s, explanation replaced %v", d.target.decision.observed, d.target.victims[0].explanation != before)
	}
}

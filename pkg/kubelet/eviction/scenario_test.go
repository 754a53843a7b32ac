package eviction

// The decision core's behaviour as data: every file in testdata/scenarios
// is a datadriven script of commands, each with its input in a compact text
// form and, after "----", what the core made of it. Rewrite the expected
// outputs with `go test -run TestScenarios -rewrite` and read the diff.
//
//	rank signal=S [layout=L]      rank the pods and stats below for S
//	decide [at=D]                 a first decision pass, at t0+D
//	evaluate [at=D]               a first pass of the threshold evaluation
//	                              only (conditions, states, actionable)
//	pass [at=D]                   the next pass of the same kind, at t0+D,
//	                              after the state the previous one left
//	admit                         admit each pod below under the conditions
//	limits                        the pods over a local storage limit
//
// Input lines (scenario_input_test.go): threshold, observe, pod, stats,
// layout, transition, max-grace, local-storage, gate.

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

func TestScenarios(t *testing.T) {
	datadriven.Walk(t, filepath.Join("testdata", "scenarios"), func(t *testing.T, path string) {
		// A pass continues the previous decide or evaluate: the state it
		// left and the kind of pass.
		var prev *decisionState
		var kind string
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			in, err := parseScenario(d.Input)
			if err != nil {
				t.Fatalf("%s: %v", d.Pos, err)
			}
			switch d.Cmd {
			case "decide", "evaluate", "pass":
				if d.HasArg("at") {
					var at string
					d.ScanArgs(t, "at", &at)
					offset, err := time.ParseDuration(at)
					if err != nil {
						t.Fatalf("%s: at=%s: %v", d.Pos, at, err)
					}
					in.now = t0.Add(offset)
				}
				if d.Cmd != "pass" {
					prev, kind = nil, d.Cmd
				} else if prev == nil {
					t.Fatalf("%s: pass without a decide or evaluate before it", d.Pos)
				}
				switch kind {
				case "evaluate":
					ev := evaluate(in.thresholds, in.state(prev), in.observations(), in.transition, in.now)
					prev = &ev.next
					return renderEvaluation(in.thresholds, &ev)
				//evictkit:begin decision
				case "decide":
					di := in.decideInput(prev)
					dec := decide(di)
					prev = &dec.next
					return renderDecision(di, &dec)
					//evictkit:end decision
				}
			//evictkit:begin ranking
			case "rank":
				var signal, layout string
				d.ScanArgs(t, "signal", &signal)
				if d.HasArg("layout") {
					d.ScanArgs(t, "layout", &layout)
				}
				fs, err := parseLayout(layout)
				if err != nil {
					t.Fatalf("%s: %v", d.Pos, err)
				}
				class := signalRankClass(parseSignal(signal))
				return renderRanking(rankPods(in.pods, in.stats, parseSignal(signal), fs), class)
			case "limits":
				return renderViolations(localStorageViolations(in.pods, in.stats, localStorageOptions{
					dedicatedImageFs:    in.layout.dedicatedImageFs,
					memoryVolumesExempt: in.memoryBackedVolumes,
				}))
			//evictkit:end ranking
			//evictkit:begin decision
			case "admit":
				return renderAdmission(in.conditions, in.pods)
				//evictkit:end decision
			}
			t.Fatalf("%s: unknown command %q (want rank, decide, evaluate, pass, admit or limits, each at the commit that adds what it checks)", d.Pos, d.Cmd)
			return ""
		})
	})
}

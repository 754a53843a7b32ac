package e2ereport

import (
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"
)

func controlSpec(text string, state types.SpecState, expected, failure string) types.SpecReport {
	sr := types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: text, State: state}
	if expected != "" {
		sr.ReportEntries = append(sr.ReportEntries, types.ReportEntry{Name: ControlEntry, Value: types.WrapEntryValue(expected)})
	}
	sr.Failure.Message = failure
	return sr
}

func TestControls(t *testing.T) {
	reports := []types.Report{{SpecReports: types.SpecReports{
		controlSpec("fails as expected", types.SpecStateFailed, "not in one pass", "hog-a and hog-b 2.1s apart: not in one pass\nmore"),
		controlSpec("fails otherwise", types.SpecStateFailed, "no decision clause", "node not Ready"),
		controlSpec("passes", types.SpecStatePassed, "taken", ""),
		controlSpec("states nothing", types.SpecStateFailed, "", "whatever"),
		controlSpec("skipped", types.SpecStateSkipped, "x", ""),
		controlSpec("stopped trying", types.SpecStateFailed, "no WouldEvict event", "Told to stop trying after 10.2s.\nno WouldEvict event: the hog was evicted\nAt one point, however, ..."),
	}}}
	got, err := Controls(reports)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 {
		t.Fatalf("%d controls, want 5 (the skipped spec left out): %+v", len(got), got)
	}
	wantSeen := []bool{true, false, false, false, true}
	for i, c := range got {
		if c.Seen != wantSeen[i] {
			t.Errorf("%s: seen=%v, want %v (%s)", c.Spec, c.Seen, wantSeen[i], c.Message)
		}
	}
	var b strings.Builder
	ok, err := RenderControls(&b, "upstream", got)
	if err != nil || ok {
		t.Fatalf("RenderControls ok=%v err=%v, want not ok", ok, err)
	}
	for _, w := range []string{"| fails as expected | `not in one pass` | yes | hog-a and hog-b 2.1s apart: not in one pass … |", "does not test its feature", "states no expected control failure",
		"| stopped trying | `no WouldEvict event` | yes | no WouldEvict event: the hog was evicted … |"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("table lacks %q:\n%s", w, b.String())
		}
	}
	if ok, _ := RenderControls(&strings.Builder{}, "upstream", got[:1]); !ok {
		t.Error("a run whose one control failed as expected is not ok")
	}
}

package e2ereport

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"
)

// spec builds a spec report as Ginkgo writes it, through its JSON form.
func spec(t *testing.T, text string, nodeType types.NodeType, state types.SpecState, evictions any) types.SpecReport {
	t.Helper()
	sr := types.SpecReport{LeafNodeText: text, LeafNodeType: nodeType, State: state}
	if evictions != nil {
		sr.ReportEntries = types.ReportEntries{{Name: EvictionsEntry, Value: types.WrapEntryValue(evictions)}}
	}
	return sr
}

func failing(sr types.SpecReport, message string) types.SpecReport {
	sr.Failure.Message = message
	return sr
}

func TestSummarizeCutsLongFailureMessages(t *testing.T) {
	long := strings.Repeat("é", 2*maxMessage)
	got, err := Summarize("node", []types.Report{{SpecReports: types.SpecReports{
		failing(spec(t, "fails", types.NodeTypeIt, types.SpecStateFailed, nil), long),
	}}})
	if err != nil {
		t.Fatal(err)
	}
	msg := []rune(got.FailedSpecs[0].Message)
	if len(msg) != maxMessage || msg[len(msg)-1] != '…' {
		t.Errorf("message of %d runes ending %q, want %d ending with an ellipsis", len(msg), string(msg[len(msg)-1]), maxMessage)
	}
}

func roundTrip(t *testing.T, reports []types.Report) []types.Report {
	t.Helper()
	raw, err := json.Marshal(reports)
	if err != nil {
		t.Fatal(err)
	}
	var out []types.Report
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSummarize(t *testing.T) {
	reports := roundTrip(t, []types.Report{{
		RunTime: 90 * time.Second,
		SpecReports: types.SpecReports{
			spec(t, "", types.NodeTypeBeforeSuite, types.SpecStatePassed, nil),
			spec(t, "evicts the hog", types.NodeTypeIt, types.SpecStatePassed, 2),
			spec(t, "evicts nothing", types.NodeTypeIt, types.SpecStatePassed, 0),
			failing(spec(t, "times out", types.NodeTypeIt, types.SpecStateTimedout, 1), "Told to stop trying\n\npod b was evicted\twhile a runs"),
			spec(t, "filtered out", types.NodeTypeIt, types.SpecStateSkipped, nil),
			spec(t, "", types.NodeTypeAfterSuite, types.SpecStateFailed, nil),
		},
	}})
	got, err := Summarize("node", reports)
	if err != nil {
		t.Fatal(err)
	}
	want := Suite{Name: "node", Ran: true, Passed: 2, Failed: 2, Skipped: 1, Duration: 90 * time.Second, Evictions: 3,
		FailedSpecs: []FailedSpec{{"times out", "Told to stop trying pod b was evicted while a runs"}, {"[AfterSuite]", ""}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Summarize = %+v, want %+v", got, want)
	}
}

func TestSummarizeRejectsABadEvictionCount(t *testing.T) {
	for _, v := range []any{"two", -1, 1.5} {
		reports := roundTrip(t, []types.Report{{SpecReports: types.SpecReports{
			spec(t, "bad", types.NodeTypeIt, types.SpecStatePassed, v),
		}}})
		if _, err := Summarize("node", reports); err == nil || !strings.Contains(err.Error(), EvictionsEntry) {
			t.Errorf("count %v: error %v, want one naming %s", v, err, EvictionsEntry)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	s, err := Load("e2e", filepath.Join(dir, "missing.json"))
	if err != nil || s.Ran || s.Name != "e2e" {
		t.Errorf("missing report: %+v, %v; want a suite that did not run", s, err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("<testsuites/>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load("e2e", bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("bad report: error %v, want one naming %s", err, bad)
	}
}

func TestParsePhases(t *testing.T) {
	got, err := ParsePhases(strings.NewReader("kubelet\t120\tok\n\ncluster\t95\tfailed\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Phase{{"kubelet", 120 * time.Second, true}, {"cluster", 95 * time.Second, false}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("ParsePhases = %+v, want %+v", got, want)
	}
	for _, bad := range []string{"kubelet 120 ok", "kubelet\tsoon\tok", "kubelet\t-1\tok", "kubelet\t1\tmaybe"} {
		if _, err := ParsePhases(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("ParsePhases(%q): error %v, want one naming line 1", bad, err)
		}
	}
}

func TestRender(t *testing.T) {
	var b strings.Builder
	err := Render(&b, []Suite{
		{Name: "node", Ran: true, Passed: 14, Failed: 1, Duration: 1636 * time.Second, Evictions: 20, FailedSpecs: []FailedSpec{{"Image GC relieves", "Expected 1 to be 0"}}},
		{Name: "e2e"},
	}, []Phase{{"cluster", 100 * time.Second, true}, {"test-node", 1650 * time.Second, false}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| node | 14 | 1 | 0 | 20 | 27m16s |",
		"| e2e | not run |",
		"Failed specs:\n- node: Image GC relieves\n  Expected 1 to be 0\n",
		"| test-node | 27m30s | FAILED |",
		"| total | 29m10s | |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
}

// Package e2ereport turns the e2e suites' Ginkgo JSON reports and the main
// job's phase timings into the short summary make e2e prints.
package e2ereport

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"
)

// EvictionsEntry is the report entry in which a spec records how many pods
// the kubelet evicted during it.
const EvictionsEntry = "evictions"

// Suite is one suite's outcome.
type Suite struct {
	Name     string
	Ran      bool // false: no report (the suite did not run)
	Passed   int
	Failed   int
	Skipped  int
	Duration time.Duration
	// Evictions is the sum of the specs' EvictionsEntry values.
	Evictions int
	// FailedSpecs are the failed specs, in the report's order.
	FailedSpecs []FailedSpec
}

// FailedSpec is a failed spec's full text and its failure message, on one
// line and cut short (a summary names the failure; the report has it all).
type FailedSpec struct {
	Spec    string
	Message string
}

// maxMessage is how much of a failure message a summary keeps.
const maxMessage = 600

// Load reads a Ginkgo JSON report (-ginkgo.json-report). A missing file is
// a suite that did not run, not an error.
func Load(name, path string) (Suite, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Suite{Name: name}, nil
	} else if err != nil {
		return Suite{}, err
	}
	var reports []types.Report
	if err := json.Unmarshal(raw, &reports); err != nil {
		return Suite{}, fmt.Errorf("%s: not a Ginkgo JSON report: %w", path, err)
	}
	return Summarize(name, reports)
}

// Summarize counts the specs of reports (the setup nodes' failures count as
// failed specs too) and adds up their evictions.
func Summarize(name string, reports []types.Report) (Suite, error) {
	s := Suite{Name: name, Ran: true}
	for _, r := range reports {
		s.Duration += r.RunTime
		for _, sr := range r.SpecReports {
			isSpec := sr.LeafNodeType == types.NodeTypeIt
			switch {
			case sr.State.Is(types.SpecStateFailureStates):
				s.Failed++
				s.FailedSpecs = append(s.FailedSpecs, FailedSpec{Spec: specText(sr), Message: oneLine(sr.Failure.Message, maxMessage)})
			case !isSpec:
				continue
			case sr.State == types.SpecStatePassed:
				s.Passed++
			case sr.State.Is(types.SpecStateSkipped | types.SpecStatePending):
				s.Skipped++
			}
			for _, e := range sr.ReportEntries {
				if e.Name != EvictionsEntry {
					continue
				}
				n, ok := e.Value.GetRawValue().(float64)
				if !ok || n < 0 || n != float64(int(n)) {
					return Suite{}, fmt.Errorf("suite %s, spec %q: report entry %s is %q, want a count", name, specText(sr), EvictionsEntry, e.Value.AsJSON)
				}
				s.Evictions += int(n)
			}
		}
	}
	return s, nil
}

// oneLine joins s's lines and runs of blanks into single spaces and cuts
// it to at most max runes, marking the cut with an ellipsis.
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	return s
}

func specText(sr types.SpecReport) string {
	if sr.LeafNodeType != types.NodeTypeIt {
		return "[" + sr.LeafNodeType.String() + "]"
	}
	return strings.TrimSpace(sr.FullText())
}

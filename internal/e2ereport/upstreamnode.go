package e2ereport

import (
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/reporters"
)

// SpecTally is what the passes of upstream's node e2e suite did with one
// spec on one kubelet.
type SpecTally struct {
	Passed, Failed, Skipped int
	// Times are the run times of the passes that ran the spec.
	Times []time.Duration
	// LastFailure is the last failed pass's message (one line, cut short).
	LastFailure string
	// SkipReason is why a pass skipped the spec (the spec's own Skip).
	SkipReason string
}

// Runs is how many passes ran the spec to an outcome.
func (t SpecTally) Runs() int { return t.Passed + t.Failed }

// LoadJUnitPasses reads the JUnit reports of a kubelet's passes (Ginkgo's
// --junit-report) and tallies each spec that was selected. A spec the
// focus left out is in Ginkgo's JUnit as skipped with no reason of its
// own; it is not counted. A spec that skipped itself (e2eskipper, with a
// reason) is.
func LoadJUnitPasses(paths []string) (map[string]*SpecTally, error) {
	tallies := map[string]*SpecTally{}
	for _, p := range paths {
		suites, err := loadJUnit(p)
		if err != nil {
			return nil, err
		}
		for _, s := range suites.TestSuites {
			for _, c := range s.TestCases {
				if !strings.HasPrefix(c.Name, "[It] ") {
					continue // suite setup and teardown nodes
				}
				name := strings.TrimPrefix(c.Name, "[It] ")
				tally := func() *SpecTally {
					if tallies[name] == nil {
						tallies[name] = &SpecTally{}
					}
					return tallies[name]
				}
				d := time.Duration(c.Time * float64(time.Second))
				switch c.Status {
				case "passed":
					t := tally()
					t.Passed++
					t.Times = append(t.Times, d)
				case "failed", "panicked", "interrupted", "aborted", "timedout":
					t := tally()
					t.Failed++
					t.Times = append(t.Times, d)
					t.LastFailure = oneLine(junitFailure(c), maxMessage)
				case "skipped":
					if c.Skipped != nil && selfSkipped(c.Skipped.Message) {
						t := tally()
						t.Skipped++
						t.SkipReason = oneLine(c.Skipped.Message, maxMessage)
					}
				}
			}
		}
	}
	return tallies, nil
}

// loadJUnit reads a Ginkgo JUnit report (--junit-report).
func loadJUnit(path string) (reporters.JUnitTestSuites, error) {
	var suites reporters.JUnitTestSuites
	raw, err := os.ReadFile(path)
	if err != nil {
		return suites, err
	}
	if err := xml.Unmarshal(raw, &suites); err != nil {
		return suites, fmt.Errorf("%s: not a JUnit report: %w", path, err)
	}
	return suites, nil
}

// selfSkipped tells a spec's own Skip (Ginkgo writes "skipped - <reason>")
// from a spec the filters left out (just "skipped").
func selfSkipped(message string) bool {
	return strings.HasPrefix(message, "skipped - ")
}

func junitFailure(c reporters.JUnitTestCase) string {
	switch {
	case c.Failure != nil && c.Failure.Message != "":
		return c.Failure.Message
	case c.Error != nil && c.Error.Message != "":
		return c.Error.Message
	}
	return c.Status
}

// medianTime is the median of the spec's run times (0 for none).
func medianTime(ts []time.Duration) time.Duration {
	if len(ts) == 0 {
		return 0
	}
	s := slices.Clone(ts)
	slices.Sort(s)
	return s[len(s)/2]
}

// RenderUpstreamNode writes the side-by-side table of upstream's node e2e
// specs on each kubelet: per spec, the passes out of the passes that ran
// it, and the median time. kubelets gives the columns' order; a kubelet
// with no tallies (not run) shows "not run".
func RenderUpstreamNode(w io.Writer, header string, kubelets []string, tallies map[string]map[string]*SpecTally) error {
	specSet := map[string]bool{}
	for _, k := range kubelets {
		for name := range tallies[k] {
			specSet[name] = true
		}
	}
	specs := make([]string, 0, len(specSet))
	for name := range specSet {
		specs = append(specs, name)
	}
	sort.Strings(specs)

	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", header)
	b.WriteString("| upstream spec |")
	for _, k := range kubelets {
		fmt.Fprintf(&b, " %s: passed / ran | %s: median time |", k, k)
	}
	b.WriteString("\n|---|")
	for range kubelets {
		b.WriteString("---|---|")
	}
	b.WriteString("\n")
	var notes []string
	for _, name := range specs {
		fmt.Fprintf(&b, "| %s |", strings.ReplaceAll(name, "|", `\|`))
		for _, k := range kubelets {
			ts, ran := tallies[k]
			t := ts[name]
			switch {
			case !ran:
				b.WriteString(" not run | |")
			case t == nil:
				b.WriteString(" not selected | |")
			case t.Runs() == 0:
				fmt.Fprintf(&b, " skipped ×%d | |", t.Skipped)
				notes = append(notes, fmt.Sprintf("- %s, %s: skipped: %s", name, k, t.SkipReason))
			default:
				skipped := ""
				if t.Skipped > 0 {
					skipped = fmt.Sprintf(" (+%d skipped)", t.Skipped)
				}
				fmt.Fprintf(&b, " %d / %d%s | %s |", t.Passed, t.Runs(), skipped, medianTime(t.Times).Round(time.Second))
				if t.Failed > 0 {
					notes = append(notes, fmt.Sprintf("- %s, %s: last failure: %s", name, k, t.LastFailure))
				}
			}
		}
		b.WriteString("\n")
	}
	if len(notes) > 0 {
		b.WriteString("\n" + strings.Join(notes, "\n") + "\n")
	}
	writeOutcomeTotals(&b, kubelets, tallies)
	writeDifferences(&b, specs, kubelets, tallies)
	_, err := io.WriteString(w, b.String())
	return err
}

// outcome is what a kubelet's passes did with one spec, all passes taken
// together: a spec that failed once is failed, whatever the other passes did.
type outcome string

const (
	outcomeNotSelected outcome = "not selected"
	outcomePassed      outcome = "passed every pass"
	outcomeFailed      outcome = "failed at least once"
	outcomeSkipped     outcome = "skipped itself"
)

// outcomeOf is the spec's outcome on a kubelet (t nil: no pass selected it).
func outcomeOf(t *SpecTally) outcome {
	switch {
	case t == nil:
		return outcomeNotSelected
	case t.Failed > 0:
		return outcomeFailed
	case t.Passed > 0:
		return outcomePassed
	}
	return outcomeSkipped
}

// writeOutcomeTotals counts each kubelet's specs by outcome.
func writeOutcomeTotals(b *strings.Builder, kubelets []string, tallies map[string]map[string]*SpecTally) {
	b.WriteString("\nSpecs by outcome:\n\n")
	for _, k := range kubelets {
		ts, ran := tallies[k]
		if !ran {
			fmt.Fprintf(b, "- %s: not run\n", k)
			continue
		}
		count := map[outcome]int{}
		for _, t := range ts {
			count[outcomeOf(t)]++
		}
		fmt.Fprintf(b, "- %s: %d specs: %d %s, %d %s, %d %s\n", k, len(ts),
			count[outcomePassed], outcomePassed, count[outcomeFailed], outcomeFailed, count[outcomeSkipped], outcomeSkipped)
	}
}

// writeDifferences lists the specs that every kubelet with passes selected
// but that did not end the same way on all of them: the regressions (and
// fixes) the side-by-side run is for. A spec only some kubelets selected
// is not a difference, just not compared.
func writeDifferences(b *strings.Builder, specs, kubelets []string, tallies map[string]map[string]*SpecTally) {
	var ran []string
	for _, k := range kubelets {
		if _, ok := tallies[k]; ok {
			ran = append(ran, k)
		}
	}
	if len(ran) < 2 {
		return
	}
	var diffs []string
	compared := 0
	for _, name := range specs {
		outcomes := make([]string, 0, len(ran))
		selectedByAll, differ := true, false
		first := outcomeOf(tallies[ran[0]][name])
		for _, k := range ran {
			o := outcomeOf(tallies[k][name])
			selectedByAll = selectedByAll && o != outcomeNotSelected
			differ = differ || o != first
			outcomes = append(outcomes, fmt.Sprintf("%s %s", k, o))
		}
		if !selectedByAll {
			continue
		}
		compared++
		if differ {
			diffs = append(diffs, fmt.Sprintf("- %s: %s", name, strings.Join(outcomes, ", ")))
		}
	}
	fmt.Fprintf(b, "\nSpecs whose outcome differs between %s (of %d that all of them ran): %d\n",
		strings.Join(ran, " and "), compared, len(diffs))
	if len(diffs) > 0 {
		b.WriteString("\n" + strings.Join(diffs, "\n") + "\n")
	}
}

package parity

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// PassRecord is what a kubelet sees of one pass. Kills, GC, Pressure and
// Admit are its state: what the next passes depend on. Events and
// Statuses are texts that nothing reads back.
type PassRecord struct {
	Kills    []string
	GC       []string
	Pressure string
	Admit    []string
	Events   []string
	Statuses []string
	// gets counts the pass's summary calls; evicted is set by a kill that
	// succeeded (the harness's bookkeeping, not rendered).
	gets    int
	evicted bool
}

// state renders the pass's state lines.
func (p *PassRecord) state() []string {
	var out []string
	for _, group := range [][]string{p.GC, p.Kills, {p.Pressure}, p.Admit} {
		out = append(out, group...)
	}
	return out
}

// text renders the whole pass.
func (p *PassRecord) text() string {
	return strings.Join(append(p.state(), append(slices.Clone(p.Events), p.Statuses...)...), "\n")
}

// Trace is what a kubelet sees of a whole scenario on one manager.
type Trace struct {
	// Parse is ParseThresholdConfig's result, thresholds in a canonical
	// order, or its error.
	Parse    string
	ParseErr error
	Passes   []*PassRecord
	// Stuck says where the manager stopped answering, if it did.
	Stuck string
}

// Lines renders the trace for comparison, one observation a line.
func (t *Trace) Lines() []string {
	out := []string{"parse: " + t.Parse}
	for k, p := range t.Passes {
		pre := fmt.Sprintf("pass %d: ", k)
		for _, group := range [][]string{p.state(), p.Events, p.Statuses} {
			for _, l := range group {
				out = append(out, pre+l)
			}
		}
	}
	if t.Stuck != "" {
		out = append(out, "stuck: "+t.Stuck)
	}
	return out
}

// Text is Lines joined.
func (t *Trace) Text() string { return strings.Join(t.Lines(), "\n") }

// State is the trace without the texts nothing reads back: two runs with
// the same state went through the same passes.
func (t *Trace) State() string {
	out := []string{"parse: " + t.Parse, "stuck: " + t.Stuck}
	for k, p := range t.Passes {
		for _, l := range p.state() {
			out = append(out, fmt.Sprintf("pass %d: %s", k, l))
		}
	}
	return strings.Join(out, "\n")
}

// conditionList matches the node conditions in the admit handler's
// message, which upstream prints in map order.
var conditionList = regexp.MustCompile(`The node had condition: \[([^\]]*)\]`)

// canonicalAdmitMessage sorts the listed conditions: any order is one
// upstream can print.
func canonicalAdmitMessage(m string) string {
	return conditionList.ReplaceAllStringFunc(m, func(s string) string {
		inner := conditionList.FindStringSubmatch(s)[1]
		fields := strings.Fields(inner)
		slices.Sort(fields)
		return "The node had condition: [" + strings.Join(fields, " ") + "]"
	})
}

// firstDifference names the first line where a and b differ.
func firstDifference(a, b []string) (int, string, string) {
	for i := range max(len(a), len(b)) {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			return i, x, y
		}
	}
	return -1, "", ""
}

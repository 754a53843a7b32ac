package e2ereport

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/onsi/ginkgo/v2/types"
)

// ControlEntry is the report entry in which an Alpha spec, in a
// negative-control run, states the failure it must show: a regular
// expression its failure message must match.
const ControlEntry = "control-expects"

// Control is one spec of a negative-control run.
type Control struct {
	Spec string
	// Expected is the spec's ControlEntry; "" when it stated none.
	Expected string
	// Failed says the spec failed; Seen that its failure message matched
	// Expected (the control showed what it is there for).
	Failed, Seen bool
	// Message is the failure message (first line), or what went wrong.
	Message string
}

// LoadControls reads the Ginkgo JSON report of a negative-control run.
func LoadControls(path string) ([]Control, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var reports []types.Report
	if err := json.Unmarshal(raw, &reports); err != nil {
		return nil, fmt.Errorf("%s: not a Ginkgo JSON report: %w", path, err)
	}
	return Controls(reports)
}

// Controls judges every spec that ran in a negative-control run: it must
// have stated the failure it expects, and failed with a matching message.
func Controls(reports []types.Report) ([]Control, error) {
	var out []Control
	for _, r := range reports {
		for _, sr := range r.SpecReports {
			if sr.LeafNodeType != types.NodeTypeIt || sr.State.Is(types.SpecStateSkipped|types.SpecStatePending) {
				continue
			}
			c := Control{Spec: specText(sr), Failed: sr.State.Is(types.SpecStateFailureStates)}
			for _, e := range sr.ReportEntries {
				if e.Name == ControlEntry {
					s, ok := e.Value.GetRawValue().(string)
					if !ok {
						return nil, fmt.Errorf("spec %q: report entry %s is %q, want a pattern", c.Spec, ControlEntry, e.Value.AsJSON)
					}
					c.Expected = s
				}
			}
			msg := sr.Failure.Message
			switch {
			case c.Expected == "":
				c.Message = "the spec states no expected control failure (expectControlFailure)"
			case !c.Failed:
				c.Message = "the spec passed on a kubelet without the feature: it does not test its feature"
			default:
				re, err := regexp.Compile(c.Expected)
				if err != nil {
					return nil, fmt.Errorf("spec %q: expected failure %q: %w", c.Spec, c.Expected, err)
				}
				c.Seen = re.MatchString(msg)
				c.Message = telling(msg, re)
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// telling picks the line of a failure message that says why it failed:
// the one the expected pattern matches (Gomega puts its own words, such
// as "Told to stop trying after 10s.", first), else the first line.
func telling(msg string, expected *regexp.Regexp) string {
	lines := strings.Split(strings.TrimSpace(msg), "\n")
	pick := 0
	for i, l := range lines {
		if expected.MatchString(l) {
			pick = i
			break
		}
	}
	s := oneLine(lines[pick], maxMessage)
	if len(lines) > 1 {
		s += " …"
	}
	return s
}

// RenderControls writes the controls as a Markdown table and reports
// whether every control showed its expected failure.
func RenderControls(w io.Writer, kubelet string, controls []Control) (bool, error) {
	ok := len(controls) > 0
	var b strings.Builder
	fmt.Fprintf(&b, "## Negative controls (kubelet %s, Alpha specs without their feature gates)\n\n", kubelet)
	fmt.Fprintf(&b, "| Spec | Expected failure | Seen | Failure message |\n|---|---|---|---|\n")
	for _, c := range controls {
		seen := "no"
		if c.Seen {
			seen = "yes"
		} else {
			ok = false
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s |\n", cell(c.Spec), cell(c.Expected), seen, cell(c.Message))
	}
	if len(controls) == 0 {
		b.WriteString("\nNo spec ran.\n")
	}
	_, err := io.WriteString(w, b.String())
	return ok, err
}

// cell makes text safe for a Markdown table cell.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

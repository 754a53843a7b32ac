package e2ereport

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Phase is one timed step of the main job.
type Phase struct {
	Name     string
	Duration time.Duration
	OK       bool
}

// ParsePhases reads the main job's phase log: one "name<TAB>seconds<TAB>ok|failed"
// line per phase, in order.
func ParsePhases(r io.Reader) ([]Phase, error) {
	var phases []Phase
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		f := strings.Split(text, "\t")
		if len(f) != 3 {
			return nil, fmt.Errorf("phase line %d %q: want name, seconds and ok|failed separated by tabs", line, text)
		}
		secs, err := strconv.Atoi(f[1])
		if err != nil || secs < 0 {
			return nil, fmt.Errorf("phase line %d %q: seconds %q is not a whole number", line, text, f[1])
		}
		if f[2] != "ok" && f[2] != "failed" {
			return nil, fmt.Errorf("phase line %d %q: status %q, want ok or failed", line, text, f[2])
		}
		phases = append(phases, Phase{Name: f[0], Duration: time.Duration(secs) * time.Second, OK: f[2] == "ok"})
	}
	return phases, sc.Err()
}

// Render writes the summary as Markdown: one row per suite, the failed
// specs, then one row per phase.
func Render(w io.Writer, suites []Suite, phases []Phase) error {
	var b strings.Builder
	b.WriteString("| Suite | Passed | Failed | Skipped | Evictions | Time |\n|---|---:|---:|---:|---:|---:|\n")
	for _, s := range suites {
		if !s.Ran {
			fmt.Fprintf(&b, "| %s | not run | | | | |\n", s.Name)
			continue
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %s |\n", s.Name, s.Passed, s.Failed, s.Skipped, s.Evictions, s.Duration.Round(time.Second))
	}
	header := "\nFailed specs:\n"
	for _, s := range suites {
		for _, spec := range s.FailedSpecs {
			b.WriteString(header)
			header = ""
			fmt.Fprintf(&b, "- %s: %s\n", s.Name, spec.Spec)
			if spec.Message != "" {
				fmt.Fprintf(&b, "  %s\n", spec.Message)
			}
		}
	}
	if len(phases) > 0 {
		b.WriteString("\n| Phase | Time | Result |\n|---|---:|---|\n")
		var total time.Duration
		for _, p := range phases {
			result := "ok"
			if !p.OK {
				result = "FAILED"
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", p.Name, p.Duration, result)
			total += p.Duration
		}
		fmt.Fprintf(&b, "| total | %s | |\n", total)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

//evictkit:file ranking

package eviction

// How a scenario's ranking and local storage limits are written.

import (
	"fmt"
	"strings"
	"text/tabwriter"
)

// renderRanking writes one line per candidate, first victim first.
func renderRanking(ranked []candidate, class rankClass) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for i, c := range ranked {
		fmt.Fprintf(w, "%d\t%s\t%s\n", i+1, podName(c), candidateFigures(c, class))
	}
	_ = w.Flush()
	return b.String()
}

// podName is the pod's name, with its namespace and UID when they are not
// the builders' defaults.
func podName(c candidate) string {
	name := c.pod.Name
	if c.pod.Namespace != "ns" {
		name = c.pod.Namespace + "/" + name
	}
	if string(c.pod.UID) != c.pod.Name+"-uid" {
		name += " (uid " + string(c.pod.UID) + ")"
	}
	return name
}

// candidateFigures says what ranked the candidate: stats, usage against
// request, priority, and whether it may be evicted at all.
func candidateFigures(c candidate, class rankClass) string {
	var parts []string
	switch {
	case !c.hasStats:
		parts = append(parts, "no stats")
	case class == rankByProcesses:
		parts = append(parts, fmt.Sprintf("processes %d", c.usage))
	default:
		amount := formatBytes
		if class == rankByDiskInodes {
			amount = func(n int64) string { return fmt.Sprint(n) }
		}
		rel := "within"
		if c.exceeds {
			rel = "above"
		}
		parts = append(parts, fmt.Sprintf("usage %s %s request %s", amount(c.usage), rel, amount(c.request)))
		if c.exceeds {
			parts = append(parts, "by "+amount(c.excess))
		}
	}
	parts = append(parts, fmt.Sprintf("priority %d", c.priority))
	if c.critical {
		parts = append(parts, "critical")
	}
	return strings.Join(parts, ", ")
}

// renderViolations writes one line per pod over a local storage limit: the
// limit's metric label and the eviction message.
func renderViolations(vs []storageViolation) string {
	if len(vs) == 0 {
		return "none\n"
	}
	var b strings.Builder
	for _, v := range vs {
		fmt.Fprintf(&b, "%s: %s %q\n", v.pod.Name, v.limit, v.message)
	}
	return b.String()
}

// Package workloadlog is the log protocol of the test workload
// (test/images/workload): the lines its hogs and its memory sampler print
// that the node suites and the bench read. Both sides use this package, so
// a line and its parser cannot drift apart.
package workloadlog

import (
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// Holding is the line a hog prints once it has taken its size; it then
// holds it until it is killed.
const Holding = "holding until killed"

// Signal is the line a hog prints for each signal it gets (it survives
// them all but SIGKILL): which signal, when by the hog's own clock, and
// what it had taken then in its unit ("120 MiB", "3000 threads").
type Signal struct {
	Name  string // as Go names it: "terminated" for SIGTERM
	At    time.Time
	Taken string
}

// SigtermName is Go's name of SIGTERM, the signal the kubelet's kill sends first.
const SigtermName = "terminated"

func (s Signal) String() string {
	return fmt.Sprintf("received %s at %s with %s taken", s.Name, stamp(s.At), s.Taken)
}

var signalRe = regexp.MustCompile(`^received (\S+) at (\S+) with (.+) taken$`)

// ParseSignal reads a Signal line; ok is false for any other line.
func ParseSignal(line string) (s Signal, ok bool) {
	m := signalRe.FindStringSubmatch(line)
	if m == nil {
		return Signal{}, false
	}
	at, err := time.Parse(time.RFC3339Nano, m[2])
	if err != nil {
		return Signal{}, false
	}
	return Signal{Name: m[1], At: at, Taken: m[3]}, true
}

var mibRe = regexp.MustCompile(`^(\d+) MiB$`)

// TakenMiB is what a memory hog had taken, in MiB; ok is false when the
// figure is not in MiB (a hog of threads or files).
func (s Signal) TakenMiB() (n int64, ok bool) {
	m := mibRe.FindStringSubmatch(s.Taken)
	if m == nil {
		return 0, false
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	return n, err == nil
}

// FirstSigterm is the first SIGTERM line among a hog's lines.
func FirstSigterm(lines []string) (Signal, bool) {
	for _, l := range lines {
		if s, ok := ParseSignal(l); ok && s.Name == SigtermName {
			return s, true
		}
	}
	return Signal{}, false
}

// Crossing is the sampler's line for memory.available falling below its
// level (Recovered false) or coming back to it, by the rule Rule names:
// "" for the Summary API's working set, RuleReclaimable for the one that
// counts clean page cache as available.
type Crossing struct {
	Recovered bool
	At        time.Time
	Available int64 // bytes; negative past the capacity
	Rule      string
}

// RuleReclaimable names the reclaimable rule of memory.available.
const RuleReclaimable = "reclaimable"

func (c Crossing) String() string {
	word := "crossed"
	if c.Recovered {
		word = "recovered"
	}
	line := fmt.Sprintf("%s at %s available %d", word, stamp(c.At), c.Available)
	if c.Rule != "" {
		line += " rule " + c.Rule
	}
	return line
}

var crossingRe = regexp.MustCompile(`^(crossed|recovered) at (\S+) available (-?\d+)(?: rule (\S+))?$`)

// ParseCrossing reads a Crossing line; ok is false for any other line.
func ParseCrossing(line string) (c Crossing, ok bool) {
	m := crossingRe.FindStringSubmatch(line)
	if m == nil {
		return Crossing{}, false
	}
	at, err := time.Parse(time.RFC3339Nano, m[2])
	if err != nil {
		return Crossing{}, false
	}
	avail, err := strconv.ParseInt(m[3], 10, 64)
	if err != nil {
		return Crossing{}, false
	}
	return Crossing{Recovered: m[1] == "recovered", At: at, Available: avail, Rule: m[4]}, true
}

// stamp is the lines' time format: UTC, nanoseconds.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

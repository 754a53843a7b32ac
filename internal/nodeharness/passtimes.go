package nodeharness

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

// The times of the eviction manager's passes, from the kubelet's own log,
// the same for both kubelets: at verbosity 3 each monitoring pass logs
// every signal it observed (upstream: "Eviction manager:", ours:
// "Eviction manager: observed signal"; both with log="observations" and
// the signal's available figure), and at the default verbosity a pass
// that acts on a threshold logs "Eviction manager: attempting to reclaim".

// klogHeaderRe is klog's header: severity, month and day, time to the
// microsecond.
var klogHeaderRe = regexp.MustCompile(`^[IWE](\d{2})(\d{2}) (\d{2}:\d{2}:\d{2}\.\d{6}) `)

var (
	observationLineRe = regexp.MustCompile(`"Eviction manager:(?: observed signal)?" log="observations" signal="([^"]+)".* available="?([^" ]+)"?`)
	reclaimLineRe     = regexp.MustCompile(`"Eviction manager: attempting to reclaim"`)
)

// KlogTime reads the time of a kubelet log line, in UTC (the nodes' zone).
// klog's header has no year: it is the year of ref, or the one before
// when the date would be more than two days after ref (a run across New
// Year). ok is false for a line without a header.
func KlogTime(line string, ref time.Time) (at time.Time, ok bool, err error) {
	m := klogHeaderRe.FindStringSubmatch(line)
	if m == nil {
		return time.Time{}, false, nil
	}
	month, _ := strconv.Atoi(m[1])
	day, _ := strconv.Atoi(m[2])
	clock, err := time.Parse("15:04:05.000000", m[3])
	if err != nil {
		return time.Time{}, false, fmt.Errorf("kubelet log line %q: %w", line, err)
	}
	at = time.Date(ref.UTC().Year(), time.Month(month), day, clock.Hour(), clock.Minute(), clock.Second(), clock.Nanosecond(), time.UTC)
	if at.After(ref.Add(48 * time.Hour)) {
		at = at.AddDate(-1, 0, 0)
	}
	return at, true, nil
}

// Observed is one monitoring pass's observation of a signal: when the
// kubelet logged it and the figure, in bytes (or items).
type Observed struct {
	At        time.Time
	Available int64
}

// ParseObservations returns, from kubelet log lines, every monitoring
// pass's observation of signal, in log order.
func ParseObservations(lines []string, ref time.Time, signal string) ([]Observed, error) {
	var out []Observed
	for _, l := range lines {
		m := observationLineRe.FindStringSubmatch(l)
		if m == nil || m[1] != signal {
			continue
		}
		q, err := resource.ParseQuantity(m[2])
		if err != nil {
			return nil, fmt.Errorf("kubelet log line %q: available %q: %w", l, m[2], err)
		}
		at, ok, err := KlogTime(l, ref)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, Observed{At: at, Available: q.Value()})
		}
	}
	return out, nil
}

// ParseFirstObservedBelow returns, from kubelet log lines, the time of the first pass whose observation
// of signal was below threshold bytes (or items); ok is false when none
// was.
func ParseFirstObservedBelow(lines []string, ref time.Time, signal string, threshold int64) (at time.Time, ok bool, err error) {
	obs, err := ParseObservations(lines, ref, signal)
	if err != nil {
		return time.Time{}, false, err
	}
	for _, o := range obs {
		if o.Available < threshold {
			return o.At, true, nil
		}
	}
	return time.Time{}, false, nil
}

// ParseReclaimAttempts returns, from kubelet log lines, the times of the passes that acted on a
// threshold, in log order.
func ParseReclaimAttempts(lines []string, ref time.Time) ([]time.Time, error) {
	var out []time.Time
	for _, l := range lines {
		if !reclaimLineRe.MatchString(l) {
			continue
		}
		at, ok, err := KlogTime(l, ref)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, at)
		}
	}
	return out, nil
}

// FirstObservedBelow returns when, since a time, a monitoring pass of the
// kubelet first observed signal below threshold: the start of a soft
// threshold's grace period. The kubelet must log at verbosity 3 or more.
func (f *Framework) FirstObservedBelow(ctx context.Context, since time.Time, signal string, threshold int64) (time.Time, error) {
	lines, err := f.KubeletJournal(ctx, since)
	if err != nil {
		return time.Time{}, err
	}
	at, ok, err := ParseFirstObservedBelow(lines, since, signal, threshold)
	if err != nil {
		return time.Time{}, err
	}
	if !ok {
		return time.Time{}, fmt.Errorf("no pass of the kubelet since %s observed %s below %d (is it logging at verbosity 3?)", since.Format(time.RFC3339), signal, threshold)
	}
	return at, nil
}

// Observations returns the kubelet's monitoring passes' observations of
// signal since a time (the kubelet must log at verbosity 3 or more).
func (f *Framework) Observations(ctx context.Context, since time.Time, signal string) ([]Observed, error) {
	lines, err := f.KubeletJournal(ctx, since)
	if err != nil {
		return nil, err
	}
	return ParseObservations(lines, since, signal)
}

// ReclaimAttempts returns when, since a time, the kubelet's passes acted on
// a threshold.
func (f *Framework) ReclaimAttempts(ctx context.Context, since time.Time) ([]time.Time, error) {
	lines, err := f.KubeletJournal(ctx, since)
	if err != nil {
		return nil, err
	}
	return ParseReclaimAttempts(lines, since)
}

package nodeharness

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// evictedLineRe matches the line both kubelets (ours and upstream's) log
// when they have evicted a pod, with klog's header: severity, month and
// day, time to the microsecond. A kill that outlasts the kubelet's wait
// (on the slow cgroup v2 VM node) is logged as "pod failed to evict"; the
// kubelet counts it as an eviction all the same, and so does this.
var evictedLineRe = regexp.MustCompile(`^[IWE](\d{2})(\d{2}) (\d{2}:\d{2}:\d{2}\.\d{6}) .*"Eviction manager: (?:pod is evicted successfully|pod failed to evict)".* pod="([^"]+)"`)

// EvictionTimes returns when the kubelet evicted each pod since a time, by
// the kubelet's own clock (to the microsecond), keyed "namespace/name":
// the times by which the kubelet's order of evictions is checked, closer
// than the second-granular timestamps of pod status and events. A pod
// evicted twice keeps its first time.
func (f *Framework) EvictionTimes(ctx context.Context, since time.Time) (map[string]time.Time, error) {
	lines, err := f.KubeletJournal(ctx, since)
	if err != nil {
		return nil, err
	}
	return parseEvictionTimes(lines, since)
}

// parseEvictionTimes reads eviction times from kubelet log lines, in UTC
// (the nodes' zone; only their order matters). klog's header has no year:
// it is the year of ref, or the one before when the date would be more
// than two days after ref (a run across New Year).
func parseEvictionTimes(lines []string, ref time.Time) (map[string]time.Time, error) {
	out := map[string]time.Time{}
	for _, l := range lines {
		m := evictedLineRe.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		month, _ := strconv.Atoi(m[1])
		day, _ := strconv.Atoi(m[2])
		clock, err := time.Parse("15:04:05.000000", m[3])
		if err != nil {
			return nil, fmt.Errorf("kubelet log line %q: %w", l, err)
		}
		at := time.Date(ref.UTC().Year(), time.Month(month), day, clock.Hour(), clock.Minute(), clock.Second(), clock.Nanosecond(), time.UTC)
		if at.After(ref.Add(48 * time.Hour)) {
			at = at.AddDate(-1, 0, 0)
		}
		if _, seen := out[m[4]]; !seen {
			out[m[4]] = at
		}
	}
	return out, nil
}

package nodeharness

import (
	"context"
	"regexp"
	"time"
)

// evictedLineRe matches the line both kubelets (ours and upstream's) log
// when they have evicted a pod (its time is klog's header's, KlogTime). A
// kill that outlasts the kubelet's wait (on the slow cgroup v2 VM node) is
// logged as "pod failed to evict"; the kubelet counts it as an eviction
// all the same, and so does this.
var evictedLineRe = regexp.MustCompile(`"Eviction manager: (?:pod is evicted successfully|pod failed to evict)".* pod="([^"]+)"`)

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

// parseEvictionTimes reads eviction times from kubelet log lines (KlogTime
// says how their times are read).
func parseEvictionTimes(lines []string, ref time.Time) (map[string]time.Time, error) {
	out := map[string]time.Time{}
	for _, l := range lines {
		m := evictedLineRe.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		at, ok, err := KlogTime(l, ref)
		if err != nil {
			return nil, err
		}
		if _, seen := out[m[1]]; ok && !seen {
			out[m[1]] = at
		}
	}
	return out, nil
}

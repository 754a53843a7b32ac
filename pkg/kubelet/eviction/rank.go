//evictkit:file ranking

package eviction

import (
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	v1resource "k8s.io/kubernetes/pkg/api/v1/resource"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
	kubelettypes "k8s.io/kubernetes/pkg/kubelet/types"
)

// candidate is an active pod with the figures that rank it for one signal.
type candidate struct {
	pod *v1.Pod
	// hasStats is false when the Summary API had nothing for the pod;
	// such pods rank first, as upstream ranks them.
	hasStats bool
	// priority is the pod's scheduling priority.
	priority int32
	// usage is what the pod uses of the starved resource (bytes, inodes or processes).
	usage int64
	// request is what the pod requests of the starved resource.
	request int64
	// exceeds is set when usage is above the request (memory and disk).
	exceeds bool
	// excess is usage minus the request that upstream subtracts for the
	// signal (for inode signals that is the ephemeral-storage request).
	excess int64
	// critical pods (static, mirror, system-critical priority) are ranked
	// but never evicted.
	critical bool
}

// tier groups candidates before priority is looked at: pods without stats,
// then pods above their request, then the rest. PID ranking has no tiers.
func (c *candidate) tier(class rankClass) int {
	switch {
	case class == rankByProcesses:
		return 0
	case !c.hasStats:
		return 0
	case c.exceeds:
		return 1
	default:
		return 2
	}
}

// reason says in words why the candidate ranks where it does.
func (c *candidate) reason(class rankClass) string {
	if !c.hasStats {
		return "no usage stats"
	}
	what := "usage"
	switch class {
	case rankByProcesses:
		return fmt.Sprintf("priority %d, %d processes", c.priority, c.usage)
	case rankByDiskInodes:
		what = "inodes"
	}
	if c.exceeds {
		return fmt.Sprintf("%s %d exceeds request %d, priority %d, %d above request", what, c.usage, c.request, c.priority, c.excess)
	}
	return fmt.Sprintf("%s %d within request %d, priority %d", what, c.usage, c.request, c.priority)
}

// rankPods returns the active pods ranked for eviction under signal, first
// victim first. The rules, as upstream's:
//
//	memory: no stats, then usage above request; then lower priority;
//	        then larger working set above request.
//	disk:   the same, with the layout's local storage (bytes or inodes).
//	PID:    lower priority; then no stats; then more processes.
//
// Pods that tie on every rule keep a fixed order by namespace, name and
// UID, so the same inputs always give the same ranking (upstream's order
// for ties depends on the active pods' order).
func rankPods(pods []*v1.Pod, stats podStatsIndex, signal evictionapi.Signal, layout fsLayout) []candidate {
	class := signalRankClass(signal)
	parts := diskUsageParts(layout, signal)
	out := make([]candidate, 0, len(pods))
	for _, pod := range pods {
		if pod == nil {
			continue
		}
		out = append(out, measure(pod, stats.lookup(pod), class, parts))
	}
	sort.SliceStable(out, func(i, j int) bool { return rankedBefore(&out[i], &out[j], class) })
	return out
}

// measure computes one pod's ranking figures.
func measure(pod *v1.Pod, s *statsapi.PodStats, class rankClass, parts usageParts) candidate {
	c := candidate{
		pod:      pod,
		hasStats: s != nil,
		priority: corev1helpers.PodPriority(pod),
		critical: kubelettypes.IsCriticalPod(pod),
	}
	if s == nil {
		return c
	}
	switch class {
	case rankByProcesses:
		c.usage = processCount(s)
		return c
	case rankByMemory:
		c.usage = workingSet(s)
		c.request = requestOf(pod, v1.ResourceMemory)
		c.excess = satSub(c.usage, c.request)
	case rankByDiskBytes:
		c.usage, _ = localStorageUsage(pod, s, parts)
		c.request = requestOf(pod, v1.ResourceEphemeralStorage)
		c.excess = satSub(c.usage, c.request)
	case rankByDiskInodes:
		_, c.usage = localStorageUsage(pod, s, parts)
		c.request = requestOf(pod, resourceInodes)
		c.excess = satSub(c.usage, requestOf(pod, v1.ResourceEphemeralStorage))
	}
	c.exceeds = c.usage > c.request
	return c
}

// requestOf returns a pod's effective request of a resource, counting
// init containers, pod-level resources and overhead as the kubelet does.
func requestOf(pod *v1.Pod, name v1.ResourceName) int64 {
	q := v1resource.GetResourceRequestQuantity(pod, name)
	return q.Value()
}

// rankedBefore reports whether a ranks strictly ahead of b, falling back to
// the fixed tie-break.
func rankedBefore(a, b *candidate, class rankClass) bool {
	if d := compareRank(a, b, class); d != 0 {
		return d < 0
	}
	return tieBreakBefore(a.pod, b.pod)
}

// compareRank orders two candidates by the ranking rules alone: negative
// when a goes first, positive when b does, zero on a tie.
func compareRank(a, b *candidate, class rankClass) int {
	if ta, tb := a.tier(class), b.tier(class); ta != tb {
		return ta - tb
	}
	if a.priority != b.priority {
		if a.priority < b.priority {
			return -1
		}
		return 1
	}
	if class == rankByProcesses && a.hasStats != b.hasStats {
		if !a.hasStats {
			return -1
		}
		return 1
	}
	if !a.hasStats || !b.hasStats {
		return 0
	}
	key := func(c *candidate) int64 {
		if class == rankByProcesses {
			return c.usage
		}
		return c.excess
	}
	ka, kb := key(a), key(b)
	switch {
	case ka > kb:
		return -1
	case ka < kb:
		return 1
	}
	return 0
}

// tieBreakBefore is the fixed order for pods that rank equal.
func tieBreakBefore(a, b *v1.Pod) bool {
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	if a.Name != b.Name {
		return a.Name < b.Name
	}
	return a.UID < b.UID
}

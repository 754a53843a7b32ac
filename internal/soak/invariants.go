// Package soak checks what a soak run saw on its node against the
// invariants the eviction manager must keep, whatever the random pressure
// did. The checks read only what the run recorded from outside the kubelet
// (the API server's pods, events and node, the kubelet's metrics and
// systemd's view of its process), never the eviction package.
package soak

import (
	"fmt"
	"sort"
	"time"
)

// Pod is a pod the soak started.
type Pod struct {
	Namespace, Name, UID string
	// MustStay: a critical or static pod, which the kubelet may never
	// evict.
	MustStay bool
	Priority int32
	// MemoryRequest and StorageRequest are the sums of the containers'
	// memory and ephemeral-storage requests, bytes.
	MemoryRequest, StorageRequest int64
	// MemoryGuaranteed: each container's memory limit equals its request,
	// so the pod can never use more than it requested.
	MemoryGuaranteed bool
	// Deleted is when the soak deleted the pod (zero: it did not).
	Deleted time.Time
}

// Eviction is one Evicted event of a pod on the node.
type Eviction struct {
	UID  string
	Name string // namespace/name, for reports
	At   time.Time
	// Resource is the event's starved_resource annotation: memory,
	// ephemeral-storage, pids; empty for a local storage limit eviction,
	// which needs no pressure condition.
	Resource string
}

// ConditionSample is the node as the soak read it at one moment: whether
// it was Ready and, for each pressure condition that was True, since when
// (its lastTransitionTime).
type ConditionSample struct {
	At       time.Time
	Ready    bool
	Pressure map[string]time.Time // condition type → true since
}

// KubeletSample is the kubelet's process and its kubelet_evictions
// counts (summed over signals) at one moment.
type KubeletSample struct {
	At        time.Time
	PID       int
	Restarts  int // systemd's NRestarts: restarts systemd made on its own
	Evictions int
}

// History is what a soak run recorded, each list in time order.
type History struct {
	Pods       []Pod
	Evictions  []Eviction
	Conditions []ConditionSample
	Kubelet    []KubeletSample
	// OOMKills are the pods the kernel's OOM killer killed a process of
	// at a limit above the pod's own (the pods' cgroup, the node), by
	// UID: from the kernel's log (kernellog.OOMKill), not containerd's status.
	OOMKills []string
	// FastPath: the kubelet ran with EvictionFastPath, which promises no
	// kernel OOM kill of a pod.
	FastPath bool
	// Leftovers are what the run created and found still there at the end.
	Leftovers []string
	// Usage is the pods' usage over time, for the Ranking invariant.
	Usage []UsageSample
}

// Violation is one broken invariant.
type Violation struct {
	Invariant string
	At        time.Time
	What      string
}

// The invariants, as reports name them.
const (
	MustStayEvicted    = "a critical or static pod was evicted"
	NoPressure         = "a pod was evicted while the node was not under the pressure its event names"
	EvictedTwice       = "a pod has more than one Evicted event"
	CountMismatch      = "kubelet_evictions does not equal the evictions seen"
	NotReady           = "the node was not Ready"
	KubeletRestarted   = "the kubelet restarted on its own"
	OOMKilled          = "the kernel OOM-killed a pod with the fast path on"
	NotCleanedUp       = "something the soak created was left behind"
	MissingPressureFor = "an eviction names a resource with no pressure condition"
)

// conditionFor maps an Evicted event's starved_resource to the node
// condition the kubelet sets for it.
var conditionFor = map[string]string{
	"memory":            "MemoryPressure",
	"ephemeral-storage": "DiskPressure",
	"inodes":            "DiskPressure",
	"pids":              "PIDPressure",
}

// Check returns every violation in h, in time order. slack is how far an
// eviction may be from its pressure condition's True span: the kubelet
// posts the condition with its node status, up to a status period after
// it acts on a threshold (and the fast path acts within milliseconds).
func Check(h History, slack time.Duration) []Violation {
	var out []Violation
	out = append(out, checkMustStay(h)...)
	out = append(out, checkPressure(h, slack)...)
	out = append(out, checkOnce(h)...)
	out = append(out, checkCounts(h)...)
	out = append(out, checkRanking(h)...)
	out = append(out, checkNode(h)...)
	if h.FastPath {
		for _, uid := range h.OOMKills {
			out = append(out, Violation{Invariant: OOMKilled, What: "pod " + uid})
		}
	}
	for _, l := range h.Leftovers {
		out = append(out, Violation{Invariant: NotCleanedUp, What: l})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out
}

func checkMustStay(h History) []Violation {
	stay := map[string]Pod{}
	for _, p := range h.Pods {
		if p.MustStay {
			stay[p.UID] = p
		}
	}
	var out []Violation
	for _, e := range h.Evictions {
		if p, ok := stay[e.UID]; ok {
			out = append(out, Violation{Invariant: MustStayEvicted, At: e.At, What: p.Namespace + "/" + p.Name})
		}
	}
	return out
}

// pressureSpans returns, per condition, the spans in which the samples
// show it True: from its lastTransitionTime to the first later sample
// without it (or the last sample).
func pressureSpans(samples []ConditionSample) map[string][][2]time.Time {
	spans := map[string][][2]time.Time{}
	open := map[string]time.Time{}
	for _, s := range samples {
		for c, since := range s.Pressure {
			if start, ok := open[c]; !ok || !start.Equal(since) {
				if ok { // it cleared between two samples and came back
					spans[c] = append(spans[c], [2]time.Time{start, since})
				}
				open[c] = since
			}
		}
		for c, start := range open {
			if _, still := s.Pressure[c]; !still {
				spans[c] = append(spans[c], [2]time.Time{start, s.At})
				delete(open, c)
			}
		}
	}
	if n := len(samples); n > 0 {
		for c, start := range open {
			spans[c] = append(spans[c], [2]time.Time{start, samples[n-1].At})
		}
	}
	return spans
}

func checkPressure(h History, slack time.Duration) []Violation {
	spans := pressureSpans(h.Conditions)
	var out []Violation
	for _, e := range h.Evictions {
		if e.Resource == "" {
			continue
		}
		c, ok := conditionFor[e.Resource]
		if !ok {
			out = append(out, Violation{Invariant: MissingPressureFor, At: e.At, What: fmt.Sprintf("%s: %q", e.Name, e.Resource)})
			continue
		}
		covered := false
		for _, sp := range spans[c] {
			if !e.At.Before(sp[0].Add(-slack)) && !e.At.After(sp[1].Add(slack)) {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, Violation{Invariant: NoPressure, At: e.At, What: fmt.Sprintf("%s for %s: no %s within %s", e.Name, e.Resource, c, slack)})
		}
	}
	return out
}

func checkOnce(h History) []Violation {
	seen := map[string]int{}
	var out []Violation
	for _, e := range h.Evictions {
		seen[e.UID]++
		if seen[e.UID] == 2 {
			out = append(out, Violation{Invariant: EvictedTwice, At: e.At, What: e.Name})
		}
	}
	return out
}

// checkCounts sums what each kubelet process counted (a process starts
// at zero; a new PID is a new process) and compares it with the pods
// evicted (one count per pod: a pod with two events is EvictedTwice's).
func checkCounts(h History) []Violation {
	if len(h.Kubelet) == 0 {
		return nil
	}
	counted, pid, first := 0, h.Kubelet[0].PID, h.Kubelet[0].Evictions
	last := first
	for _, s := range h.Kubelet[1:] {
		if s.PID != pid {
			counted += last - first
			pid, first = s.PID, 0
		}
		last = s.Evictions
	}
	counted += last - first
	pods := map[string]bool{}
	for _, e := range h.Evictions {
		pods[e.UID] = true
	}
	if counted != len(pods) {
		return []Violation{{Invariant: CountMismatch, At: h.Kubelet[len(h.Kubelet)-1].At,
			What: fmt.Sprintf("kubelet_evictions rose by %d, %d pods evicted", counted, len(pods))}}
	}
	return nil
}

func checkNode(h History) []Violation {
	var out []Violation
	for _, s := range h.Conditions {
		if !s.Ready {
			out = append(out, Violation{Invariant: NotReady, At: s.At})
		}
	}
	for i := 1; i < len(h.Kubelet); i++ {
		if a, b := h.Kubelet[i-1], h.Kubelet[i]; b.Restarts > a.Restarts {
			out = append(out, Violation{Invariant: KubeletRestarted, At: b.At, What: fmt.Sprintf("process %d, then %d", a.PID, b.PID)})
		}
	}
	return out
}

// Tally counts violations per invariant.
func Tally(vs []Violation) map[string]int {
	t := map[string]int{}
	for _, v := range vs {
		t[v.Invariant]++
	}
	return t
}

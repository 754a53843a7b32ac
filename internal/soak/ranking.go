package soak

import (
	"fmt"
	"time"
)

// Ranking is the invariant that each victim was the kubelet's first choice
// among the pods it could have evicted, by the rule the kubelet documents
// for node-pressure eviction: for memory and local storage, pods whose
// usage exceeds their requests before the others, then lower priority
// first, then more usage first; for PIDs, lower priority first, then more
// processes first.
//
// From outside the kubelet only a clear contradiction of that rule can be
// told apart from stats age and ties: a rival that was running, known to
// the kubelet and clearly over its request (for PIDs: any rival) before
// the eviction, and that the rule puts first. See rivals. For memory and
// storage the victim must have been reported as well: a pod without stats
// ranks before all others.
const Ranking = "a pod was evicted while the ranking put another first"

// RankingLag is how long before an eviction a usage sample must be taken
// to bind the kubelet's decision: its stats are at least that fresh after
// one monitoring pass (10 s) and the event's second-resolution time.
const RankingLag = 15 * time.Second

// How far over its request a rival must be to count as clearly over it.
const (
	MemoryMargin  = 64 << 20 // bytes of working set over the memory request
	StorageMargin = 1 << 20  // bytes of ephemeral storage (none is requested)
	InodesMargin  = 100      // inodes
)

// Usage is what the kubelet's Summary API reported for one pod.
type Usage struct {
	MemoryWorkingSet int64 // bytes
	EphemeralStorage int64 // bytes, the pod's ephemeral-storage figure
	Inodes           int64 // inodes of the same figure
}

// UsageSample is the Summary API at one moment: the pods it reported, by
// UID, that the API server showed running (not deleted) at that moment.
type UsageSample struct {
	At   time.Time
	Pods map[string]Usage
}

// checkRanking holds each eviction with a starved resource to Ranking.
// It needs the pods' priority and requests (Pod), their usage over time
// (History.Usage) and when each stopped being a candidate (Pod.Deleted,
// an earlier eviction, not seen running after the eviction).
func checkRanking(h History) []Violation {
	vs, _ := rank(h)
	return vs
}

// RankingCoverage says how much the ranking check could see in h, so that
// a report shows whether it held anything to account.
func RankingCoverage(h History) RankingTally {
	_, t := rank(h)
	return t
}

func rank(h History) ([]Violation, RankingTally) {
	pods := map[string]Pod{}
	for _, p := range h.Pods {
		pods[p.UID] = p
	}
	evicted := map[string]time.Time{} // first eviction of each pod
	for _, e := range h.Evictions {
		if _, ok := evicted[e.UID]; !ok {
			evicted[e.UID] = e.At
		}
	}
	var out []Violation
	var tally RankingTally
	for _, e := range h.Evictions {
		if !evicted[e.UID].Equal(e.At) || e.Resource == "" {
			continue // a second event is EvictedTwice's; a limit eviction is not ranked
		}
		v, ok := pods[e.UID]
		if !ok {
			continue
		}
		known := reportedBy(h, e.At.Add(-RankingLag))
		if _, ok := known[e.UID]; !ok && e.Resource != "pids" {
			// A pod without stats ranks first for memory and storage: a
			// victim the Summary API had not reported yet may have had none.
			tally.Unjudged++
			continue
		}
		tally.Evictions++
		for _, r := range rivals(h, e, known) {
			tally.Rivals++
			if why := putFirst(e.Resource, r, v); why != "" {
				out = append(out, Violation{Invariant: Ranking, At: e.At,
					What: fmt.Sprintf("%s evicted for %s while %s %s", e.Name, e.Resource, r.Pod.Namespace+"/"+r.Pod.Name, why)})
			}
		}
	}
	return out, tally
}

// RankingTally says how much the ranking check could see: evictions it
// judged, rivals (pod, eviction) it held those victims against, and
// evictions it could not judge (a victim with no stats reported in time).
type RankingTally struct{ Evictions, Rivals, Unjudged int }

// rival is a pod the kubelet could have evicted in an eviction's place,
// with its usage in the newest sample taken RankingLag or more before it.
type rival struct {
	Pod   Pod
	Usage Usage
}

// rivals returns the pods that competed with e's victim for certain:
// not the victim, not a pod that must stay, in known (the pods reported
// RankingLag or more before e, so the kubelet knew them and their usage
// then), and still running after e (seen running later, not deleted or
// evicted before e's second was over).
func rivals(h History, e Eviction, known map[string]Usage) []rival {
	settled := e.At.Add(time.Second) // event times have a second's resolution
	after := map[string]bool{}
	for _, s := range h.Usage {
		if !s.At.Before(settled) {
			for uid := range s.Pods {
				after[uid] = true
			}
		}
	}
	gone := map[string]bool{}
	for _, x := range h.Evictions {
		if x.At.Before(settled) {
			gone[x.UID] = true
		}
	}
	var out []rival
	for _, p := range h.Pods {
		u, ok := known[p.UID]
		switch {
		case !ok, p.UID == e.UID, p.MustStay, gone[p.UID], !after[p.UID]:
			continue
		case !p.Deleted.IsZero() && p.Deleted.Before(settled):
			continue
		}
		out = append(out, rival{Pod: p, Usage: u})
	}
	return out
}

// reportedBy returns the pods the usage samples taken by bound reported,
// each with its newest figures then.
func reportedBy(h History, bound time.Time) map[string]Usage {
	known := map[string]Usage{}
	for _, s := range h.Usage {
		if s.At.After(bound) {
			break
		}
		for uid, u := range s.Pods {
			known[uid] = u
		}
	}
	return known
}

// putFirst says why the rule ranks rival r before victim v for resource,
// or "" if it does not for certain.
func putFirst(resource string, r rival, v Pod) string {
	lower := r.Pod.Priority < v.Priority
	switch resource {
	case "memory":
		if r.Usage.MemoryWorkingSet <= r.Pod.MemoryRequest+MemoryMargin {
			return ""
		}
		over := fmt.Sprintf("used %d MiB over a %d MiB request", r.Usage.MemoryWorkingSet>>20, r.Pod.MemoryRequest>>20)
		switch {
		case v.MemoryGuaranteed:
			return over + ", and the victim could not exceed its request"
		case lower:
			return fmt.Sprintf("%s at priority %d, below the victim's %d", over, r.Pod.Priority, v.Priority)
		}
	case "ephemeral-storage", "inodes":
		// With no request, any use exceeds it; the Summary's figure also
		// holds the pod's /etc/hosts, which the ranking leaves out, so
		// only a use well above that counts.
		used, least, unit := r.Usage.EphemeralStorage, int64(StorageMargin), "bytes"
		if resource == "inodes" {
			used, least, unit = r.Usage.Inodes, InodesMargin, "inodes"
		}
		if used >= least && r.Pod.StorageRequest == 0 && lower {
			return fmt.Sprintf("used %d %s with no request, at priority %d, below the victim's %d", used, unit, r.Pod.Priority, v.Priority)
		}
	case "pids":
		if lower {
			return fmt.Sprintf("ran at priority %d, below the victim's %d", r.Pod.Priority, v.Priority)
		}
	}
	return ""
}

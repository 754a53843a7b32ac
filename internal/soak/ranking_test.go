package soak

import (
	"reflect"
	"testing"
	"time"
)

const mib = 1 << 20

// contest is a history with one memory eviction at 60 s: victim "v"
// (priority 100, Burstable, 50 MiB request) against rival "r" (priority
// 100, 50 MiB request, 300 MiB used), both reported from 10 s on and "r"
// still running after the eviction. Only the Ranking invariant is judged.
func contest() History {
	usage := func(s int, pods ...string) UsageSample {
		u := UsageSample{At: at(s), Pods: map[string]Usage{}}
		for _, p := range pods {
			u.Pods[p] = Usage{MemoryWorkingSet: 300 * mib, EphemeralStorage: 200 * mib, Inodes: 3000}
		}
		return u
	}
	return History{
		Pods: []Pod{
			{Namespace: "soak", Name: "victim", UID: "v", Priority: 100, MemoryRequest: 50 * mib},
			{Namespace: "soak", Name: "rival", UID: "r", Priority: 100, MemoryRequest: 50 * mib},
		},
		Evictions: []Eviction{{UID: "v", Name: "soak/victim", At: at(60), Resource: "memory"}},
		Usage:     []UsageSample{usage(10, "v", "r"), usage(40, "v", "r"), usage(62, "r")},
	}
}

func TestRanking(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(h *History)
		want  int // Ranking violations
		rival int // rivals seen
	}{
		{name: "equal priority: usage decides, not clear from outside", edit: func(*History) {}, rival: 1},
		{name: "rival of lower priority over its request", edit: func(h *History) { h.Pods[1].Priority = 0 }, want: 1, rival: 1},
		{name: "rival of higher priority", edit: func(h *History) { h.Pods[1].Priority = 1000 }, rival: 1},
		{name: "victim guaranteed, rival over its request", edit: func(h *History) {
			h.Pods[0].MemoryGuaranteed, h.Pods[0].MemoryRequest = true, 400*mib
			h.Pods[1].Priority = 1000
		}, want: 1, rival: 1},
		{name: "rival within the margin of its request", edit: func(h *History) {
			h.Pods[1].Priority, h.Pods[1].MemoryRequest = 0, 250*mib
		}, rival: 1},
		{name: "rival only reported after the lag", edit: func(h *History) {
			h.Pods[1].Priority = 0
			h.Usage[0].Pods, h.Usage[1].At = map[string]Usage{"v": {}}, at(50)
		}},
		{name: "rival reported 15 s before", edit: func(h *History) {
			h.Pods[1].Priority = 0
			h.Usage[0].Pods, h.Usage[1].At = map[string]Usage{"v": {}}, at(45)
		}, want: 1, rival: 1},
		{name: "rival not seen running after", edit: func(h *History) {
			h.Pods[1].Priority = 0
			h.Usage = h.Usage[:2]
		}},
		{name: "rival seen again within the eviction's second", edit: func(h *History) {
			h.Pods[1].Priority = 0
			h.Usage[2].At = at(60).Add(500 * time.Millisecond)
		}},
		{name: "rival deleted before", edit: func(h *History) { h.Pods[1].Priority, h.Pods[1].Deleted = 0, at(59) }},
		{name: "rival deleted after", edit: func(h *History) { h.Pods[1].Priority, h.Pods[1].Deleted = 0, at(61) }, want: 1, rival: 1},
		{name: "rival evicted just before", edit: func(h *History) {
			h.Pods[1].Priority = 0
			h.Evictions = append([]Eviction{{UID: "r", Name: "soak/rival", At: at(55), Resource: "memory"}}, h.Evictions...)
		}},
		{name: "victim not reported before the lag: it may have had no stats", edit: func(h *History) {
			h.Pods[1].Priority = 0
			delete(h.Usage[0].Pods, "v")
			delete(h.Usage[1].Pods, "v")
		}},
		{name: "pids: victim not reported, priority still decides", edit: func(h *History) {
			h.Pods[1].Priority, h.Evictions[0].Resource = 0, "pids"
			delete(h.Usage[0].Pods, "v")
			delete(h.Usage[1].Pods, "v")
		}, want: 1, rival: 1},
		{name: "rival evicted in the same second", edit: func(h *History) {
			h.Pods[1].Priority = 0
			h.Evictions = append(h.Evictions, Eviction{UID: "r", Name: "soak/rival", At: at(60).Add(300 * time.Millisecond), Resource: "memory"})
		}},
		{name: "rival must stay", edit: func(h *History) { h.Pods[1].Priority, h.Pods[1].MustStay = 0, true }},
		{name: "limit eviction is not ranked", edit: func(h *History) { h.Pods[1].Priority, h.Evictions[0].Resource = 0, "" }},
		{name: "pids: any rival of lower priority", edit: func(h *History) {
			h.Pods[1].Priority, h.Pods[1].MemoryRequest, h.Evictions[0].Resource = 0, 1000*mib, "pids"
		}, want: 1, rival: 1},
		{name: "pids: equal priority", edit: func(h *History) { h.Evictions[0].Resource = "pids" }, rival: 1},
		{name: "disk: rival of lower priority", edit: func(h *History) {
			h.Pods[1].Priority, h.Evictions[0].Resource = 0, "ephemeral-storage"
		}, want: 1, rival: 1},
		{name: "disk: rival with only its hosts file", edit: func(h *History) {
			h.Pods[1].Priority, h.Evictions[0].Resource = 0, "ephemeral-storage"
			h.Usage[1].Pods["r"] = Usage{EphemeralStorage: 4096}
		}, rival: 1},
		{name: "disk: rival with a request", edit: func(h *History) {
			h.Pods[1].Priority, h.Pods[1].StorageRequest, h.Evictions[0].Resource = 0, 500*mib, "ephemeral-storage"
		}, rival: 1},
		{name: "inodes: rival of lower priority", edit: func(h *History) { h.Pods[1].Priority, h.Evictions[0].Resource = 0, "inodes" }, want: 1, rival: 1},
		{name: "inodes: rival with a few", edit: func(h *History) {
			h.Pods[1].Priority, h.Evictions[0].Resource = 0, "inodes"
			h.Usage[1].Pods["r"] = Usage{Inodes: 12}
		}, rival: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := contest()
			tc.edit(&h)
			vs := checkRanking(h)
			if len(vs) != tc.want {
				t.Errorf("violations: %+v, want %d", vs, tc.want)
			}
			if got := RankingCoverage(h).Rivals; got != tc.rival {
				t.Errorf("rivals %d, want %d", got, tc.rival)
			}
		})
	}
}

// The victim's newest sample from before the lag is the one that counts:
// a rival that grew over its request only within the lag is no rival.
func TestRankingUsesUsageBeforeTheLag(t *testing.T) {
	h := contest()
	h.Pods[1].Priority = 0
	h.Usage[0].Pods["r"] = Usage{MemoryWorkingSet: 300 * mib}
	h.Usage[1].Pods["r"] = Usage{MemoryWorkingSet: 20 * mib}
	h.Usage = append(h.Usage[:2], UsageSample{At: at(50), Pods: map[string]Usage{"r": {MemoryWorkingSet: 900 * mib}}}, h.Usage[2])
	if vs := checkRanking(h); len(vs) != 0 {
		t.Errorf("violations %+v, want none: at 40 s, the newest sample before the lag, the rival was within its request", vs)
	}
}

func TestCheckHoldsRanking(t *testing.T) {
	h := contest()
	h.Pods[1].Priority = 0
	got := Tally(Check(h, 15*time.Second))
	if want := map[string]int{Ranking: 1, NoPressure: 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("Check: %v, want %v", got, want)
	}
}

func TestRankingCoverageCountsUnjudged(t *testing.T) {
	h := contest()
	delete(h.Usage[0].Pods, "v")
	delete(h.Usage[1].Pods, "v")
	if got, want := RankingCoverage(h), (RankingTally{Unjudged: 1}); got != want {
		t.Errorf("coverage %+v, want %+v", got, want)
	}
}

package soak

import (
	"reflect"
	"testing"
	"time"
)

var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

func at(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

// clean is a history with one memory eviction under MemoryPressure, a
// kubelet that counted it, and nothing else.
func clean() History {
	return History{
		Pods:      []Pod{{Namespace: "soak", Name: "hog", UID: "u1"}, {Namespace: "soak", Name: "static", UID: "u2", MustStay: true}},
		Evictions: []Eviction{{UID: "u1", Name: "soak/hog", At: at(20), Resource: "memory"}},
		Conditions: []ConditionSample{
			{At: at(0), Ready: true},
			{At: at(10), Ready: true, Pressure: map[string]time.Time{"MemoryPressure": at(9)}},
			{At: at(30), Ready: true, Pressure: map[string]time.Time{"MemoryPressure": at(9)}},
			{At: at(40), Ready: true},
		},
		Kubelet: []KubeletSample{{At: at(0), PID: 7, Evictions: 3}, {At: at(40), PID: 7, Evictions: 4}},
	}
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(h *History)
		want map[string]int
	}{
		{name: "clean", edit: func(*History) {}, want: map[string]int{}},
		{name: "static pod evicted", edit: func(h *History) {
			h.Evictions = append(h.Evictions, Eviction{UID: "u2", Name: "soak/static", At: at(25), Resource: "memory"})
			h.Kubelet[1].Evictions = 5
		}, want: map[string]int{MustStayEvicted: 1}},
		{name: "evicted with no pressure", edit: func(h *History) { h.Evictions[0].At = at(60) }, want: map[string]int{NoPressure: 1}},
		{name: "evicted a status period before the condition", edit: func(h *History) { h.Evictions[0].At = at(1) }, want: map[string]int{}},
		{name: "wrong condition", edit: func(h *History) { h.Evictions[0].Resource = "ephemeral-storage" }, want: map[string]int{NoPressure: 1}},
		{name: "inodes under DiskPressure", edit: func(h *History) {
			h.Evictions[0].Resource = "inodes"
			for _, c := range h.Conditions[1:3] {
				c.Pressure["DiskPressure"] = c.Pressure["MemoryPressure"]
				delete(c.Pressure, "MemoryPressure")
			}
		}, want: map[string]int{}},
		{name: "inodes under MemoryPressure", edit: func(h *History) { h.Evictions[0].Resource = "inodes" }, want: map[string]int{NoPressure: 1}},
		{name: "limit eviction needs none", edit: func(h *History) { h.Evictions[0].Resource, h.Evictions[0].At = "", at(60) }, want: map[string]int{}},
		{name: "unknown resource", edit: func(h *History) { h.Evictions[0].Resource = "cpu" }, want: map[string]int{MissingPressureFor: 1}},
		{name: "two events", edit: func(h *History) {
			h.Evictions = append(h.Evictions, Eviction{UID: "u1", Name: "soak/hog", At: at(29), Resource: "memory"})
		}, want: map[string]int{EvictedTwice: 1}},
		{name: "counted twice", edit: func(h *History) { h.Kubelet[1].Evictions = 5 }, want: map[string]int{CountMismatch: 1}},
		{name: "not counted", edit: func(h *History) { h.Kubelet[1].Evictions = 3 }, want: map[string]int{CountMismatch: 1}},
		{name: "counted by a new process", edit: func(h *History) {
			h.Kubelet = []KubeletSample{{At: at(0), PID: 7, Evictions: 3}, {At: at(20), PID: 7, Evictions: 3}, {At: at(40), PID: 8, Restarts: 1, Evictions: 1}}
		}, want: map[string]int{KubeletRestarted: 1}},
		{name: "not ready", edit: func(h *History) { h.Conditions[3].Ready = false }, want: map[string]int{NotReady: 1}},
		{name: "OOM kill, fast path", edit: func(h *History) { h.OOMKills, h.FastPath = []string{"u3"}, true }, want: map[string]int{OOMKilled: 1}},
		{name: "OOM kill, no fast path", edit: func(h *History) { h.OOMKills = []string{"u3"} }, want: map[string]int{}},
		{name: "leftovers", edit: func(h *History) { h.Leftovers = []string{"namespace soak-1"} }, want: map[string]int{NotCleanedUp: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := clean()
			tc.edit(&h)
			got := Tally(Check(h, 10*time.Second))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("violations %v, want %v (%v)", got, tc.want, Check(h, 10*time.Second))
			}
		})
	}
}

// A condition that clears between two samples and comes back makes two
// spans; the first is taken to last until the second began, the latest it
// can have cleared (the samples cannot say when it did).
func TestPressureSpans(t *testing.T) {
	samples := []ConditionSample{
		{At: at(10), Pressure: map[string]time.Time{"DiskPressure": at(5)}},
		{At: at(60), Pressure: map[string]time.Time{"DiskPressure": at(50)}},
		{At: at(70)},
	}
	got := pressureSpans(samples)["DiskPressure"]
	want := [][2]time.Time{{at(5), at(50)}, {at(50), at(70)}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("spans %v, want %v", got, want)
	}
}

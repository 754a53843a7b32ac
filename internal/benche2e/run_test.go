package benche2e

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSigtermedNotEnded(t *testing.T) {
	const sigterm = "received terminated at 2026-12-07T12:19:23.65Z with 1100 MiB taken"
	hogs := []*corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "hog-a"}}, {ObjectMeta: metav1.ObjectMeta{Name: "hog-b"}}}
	for _, tc := range []struct {
		name  string
		lines map[string][]string
		ended []string
		want  []string
	}{
		{name: "no SIGTERM yet", lines: map[string][]string{"hog-a": {"holding 1100 MiB"}}},
		{name: "SIGTERM, still running", lines: map[string][]string{"hog-a": {"holding 1100 MiB", sigterm}}, want: []string{"hog-a"}},
		{name: "SIGTERM, ended", lines: map[string][]string{"hog-a": {sigterm}}, ended: []string{"hog-a"}},
		{name: "ended without SIGTERM", lines: map[string][]string{"hog-b": {"holding 10 MiB"}}, ended: []string{"hog-b"}},
		{name: "only the one still running", lines: map[string][]string{"hog-a": {sigterm}, "hog-b": {sigterm}}, ended: []string{"hog-a"}, want: []string{"hog-b"}},
		{name: "another signal is not a SIGTERM", lines: map[string][]string{"hog-a": {"received interrupt at 2026-12-07T12:19:23Z with 80 MiB taken"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := sigtermedNotEnded(hogs, tc.lines, tc.ended); !slices.Equal(got, tc.want) {
				t.Errorf("sigtermedNotEnded = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSamplerCrossings(t *testing.T) {
	at := func(ms int) time.Time { return time.Date(2026, 12, 7, 15, 0, 0, ms*int(time.Millisecond), time.UTC) }
	lines := []string{
		"memwatch: sampling /sys/fs/cgroup/memory every 5ms (cgroup v2: false), level 1",
		"crossed at 2026-12-07T15:00:00.100Z available 9",
		"recovered at 2026-12-07T15:00:00.150Z available 11",
		"lowest 9 at 2026-12-07T15:00:00.100Z",
		"crossed at 2026-12-07T15:00:00.200Z available 8",
		"crossed at 2026-12-07T15:00:00.400Z available 9 rule reclaimable",
		"recovered at 2026-12-07T15:00:00.450Z available 12 rule reclaimable",
		"lowest 9 at 2026-12-07T15:00:00.400Z rule reclaimable",
		"crossed at 2026-12-07T15:00:00.500Z available 7 rule reclaimable",
		"crossed at 2026-12-07T15:00:00.550Z available 7 rule other",
		"recovered at 2026-12-07T15:00:00.600Z available 13 rule other",
		"recovered at 2026-12-07T15:00:00.900Z available 12",
	}
	var res Result
	recoveries := samplerCrossings(lines, &res, true)
	if !res.Crossed.Equal(at(100)) {
		t.Errorf("Crossed = %s, want the first crossing without a rule (100 ms)", res.Crossed)
	}
	if !res.CrossedReclaimable.Equal(at(400)) {
		t.Errorf("CrossedReclaimable = %s, want the first reclaimable crossing (400 ms)", res.CrossedReclaimable)
	}
	if want := []time.Time{at(150), at(900)}; !slices.EqualFunc(recoveries, want, time.Time.Equal) {
		t.Errorf("recoveries = %v, want only the Summary API rule's: %v", recoveries, want)
	}
	var alloc Result
	if samplerCrossings(lines, &alloc, false); !alloc.CrossedReclaimable.IsZero() || !alloc.Crossed.Equal(at(100)) {
		t.Errorf("without the reclaimable rule: Crossed = %s, CrossedReclaimable = %s, want 100 ms and none", alloc.Crossed, alloc.CrossedReclaimable)
	}
	var none Result
	if r := samplerCrossings(lines[:1], &none, true); r != nil || !none.Crossed.IsZero() || !none.CrossedReclaimable.IsZero() {
		t.Errorf("no crossing lines: %+v, %v", none, r)
	}
}

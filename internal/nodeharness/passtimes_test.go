package nodeharness

import (
	"reflect"
	"testing"
	"time"
)

// Lines as the two kubelets print them (ours, then upstream's format).
var passLines = []string{
	`I1204 10:00:00.100000    2179 logging.go:22] "Eviction manager: observed signal" log="observations" signal="nodefs.available" resourceName="ephemeral-storage" available="2Gi" capacity="10Gi" time="2026-12-04 10:00:00 +0000 UTC"`,
	`I1204 10:00:10.200000    2179 logging.go:22] "Eviction manager: observed signal" log="observations" signal="memory.available" resourceName="memory" available="100Mi" capacity="8Gi" time="2026-12-04 10:00:10 +0000 UTC"`,
	`I1204 10:00:10.200100    2179 logging.go:22] "Eviction manager: observed signal" log="observations after resource reclaim" signal="nodefs.available" resourceName="ephemeral-storage" available="512Mi" capacity="10Gi" time="2026-12-04 10:00:10 +0000 UTC"`,
	`I1204 10:00:20.300000    2179 helpers.go:977] "Eviction manager:" log="observations" signal="nodefs.available" resourceName="ephemeral-storage" available="943718Ki" capacity="10Gi" time="2026-12-04 10:00:20 +0000 UTC"`,
	`I1204 10:00:35.300000    2179 eviction_manager.go:1] "Eviction manager: attempting to reclaim" resourceName="ephemeral-storage"`,
	`I1204 10:00:40.400000    2179 helpers.go:977] "Eviction manager:" log="observations" signal="nodefs.available" resourceName="ephemeral-storage" available="900Mi" capacity="10Gi"`,
	// ours logs the figures as integers (a line of evictkit-worker2's kubelet, as journalctl -o cat prints it)
	`I1204 10:00:50.587715    4898 logging.go:36] "Eviction manager: observed signal" log="observations" signal="nodefs.available" resourceName="ephemeral-storage" available=847671296 capacity=1547051008 time="2026-12-04 16:36:31.579640261 +0000 UTC m=+35.532859881"`,
	`I1204 10:00:45.500000    2179 eviction_manager.go:1] "Eviction manager: attempting to reclaim" resourceName="ephemeral-storage"`,
}

func TestParseObservations(t *testing.T) {
	ref := time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC)
	got, err := ParseObservations(passLines, ref, "nodefs.available")
	want := []Observed{
		{At: time.Date(2026, 12, 4, 10, 0, 0, 100000000, time.UTC), Available: 2 << 30},
		{At: time.Date(2026, 12, 4, 10, 0, 20, 300000000, time.UTC), Available: 943718 << 10},
		{At: time.Date(2026, 12, 4, 10, 0, 40, 400000000, time.UTC), Available: 900 << 20},
		{At: time.Date(2026, 12, 4, 10, 0, 50, 587715000, time.UTC), Available: 847671296},
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ParseObservations = %v, %v; want %v (after-reclaim lines and other signals left out)", got, err, want)
	}
	if got, err := ParseObservations(passLines, ref, "memory.available"); err != nil || len(got) != 1 || got[0].Available != 100<<20 {
		t.Errorf("memory.available: %v, %v; want the one line", got, err)
	}
}

func TestFirstObservedBelow(t *testing.T) {
	ref := time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC)
	// The 1Gi threshold: the memory line and the after-reclaim line do
	// not count; 943718Ki (921.6Mi) at 10:00:20.3 is the first below it.
	at, ok, err := ParseFirstObservedBelow(passLines, ref, "nodefs.available", 1<<30)
	if err != nil || !ok || !at.Equal(time.Date(2026, 12, 4, 10, 0, 20, 300000000, time.UTC)) {
		t.Errorf("firstObservedBelow = %v, %v, %v; want 10:00:20.3", at, ok, err)
	}
	// Below 850 MB only ours, logged as an integer.
	at, ok, err = ParseFirstObservedBelow(passLines, ref, "nodefs.available", 850_000_000)
	if err != nil || !ok || !at.Equal(time.Date(2026, 12, 4, 10, 0, 50, 587715000, time.UTC)) {
		t.Errorf("below 850 MB: firstObservedBelow = %v, %v, %v; want 10:00:50.587715", at, ok, err)
	}
	if _, ok, err := ParseFirstObservedBelow(passLines, ref, "nodefs.available", 512<<20); ok || err != nil {
		t.Errorf("below 512Mi: found one (%v, %v), want none", ok, err)
	}
	if _, _, err := ParseFirstObservedBelow([]string{`I1204 10:00:00.100000 1 x.go:1] "Eviction manager:" log="observations" signal="nodefs.available" available="lots"`}, ref, "nodefs.available", 1); err == nil {
		t.Error("an unreadable figure: no error")
	}
}

func TestReclaimAttempts(t *testing.T) {
	ref := time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC)
	got, err := ParseReclaimAttempts(passLines, ref)
	want := []time.Time{time.Date(2026, 12, 4, 10, 0, 35, 300000000, time.UTC), time.Date(2026, 12, 4, 10, 0, 45, 500000000, time.UTC)}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("reclaimAttempts = %v, %v; want %v", got, err, want)
	}
}

func TestKlogTimeAcrossNewYear(t *testing.T) {
	at, ok, err := KlogTime(`I1201 06:48:32.835743    5038 synchronize.go:189] "Eviction manager: must evict pod(s) to reclaim"`, time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC))
	if err != nil || !ok || !at.Equal(time.Date(2026, 12, 1, 6, 48, 32, 835743000, time.UTC)) {
		t.Errorf("KlogTime = %v, %v, %v", at, ok, err)
	}
	ref := time.Date(2027, 1, 1, 0, 0, 5, 0, time.UTC)
	at, ok, err = KlogTime(`I1231 23:59:59.999999 1 x.go:1] "m"`, ref)
	if err != nil || !ok || !at.Equal(time.Date(2026, 12, 31, 23, 59, 59, 999999000, time.UTC)) {
		t.Errorf("KlogTime = %v, %v, %v", at, ok, err)
	}
	if _, ok, _ := KlogTime("no header", ref); ok {
		t.Error("a line without a header has a time")
	}
}

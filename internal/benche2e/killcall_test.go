package benche2e

import (
	"testing"
	"time"
)

func TestKillCallTimes(t *testing.T) {
	start := time.Date(2026, 12, 6, 22, 43, 0, 0, time.UTC)
	crossed := time.Date(2026, 12, 6, 22, 43, 45, 540_000_000, time.UTC)
	at := func(s string) time.Time {
		v, err := time.Parse("15:04:05.000000", s)
		if err != nil {
			t.Fatal(err)
		}
		return time.Date(2026, 12, 6, v.Hour(), v.Minute(), v.Second(), v.Nanosecond(), time.UTC)
	}
	journal := []string{
		// An earlier pass, more than a second before the crossing.
		`I1206 22:43:30.100000    812 synchronize.go:185] "Eviction manager: attempting to reclaim" resourceName="ephemeral-storage"`,
		`I1206 22:43:30.200000    812 synchronize.go:197] "Eviction manager: must evict pod(s) to reclaim" resourceName="ephemeral-storage"`,
		`I1206 22:43:45.600000    812 disk_fast_path.go:276] "Eviction manager: disk fast path" signal="nodefs.available"`,
		`I1206 22:43:45.610000    812 synchronize.go:185] "Eviction manager: attempting to reclaim" resourceName="ephemeral-storage"`,
		`I1206 22:43:45.700000    812 synchronize.go:192] "Eviction manager: able to reduce resource pressure without evicting pods." resourceName="ephemeral-storage"`,
		`I1206 22:43:45.720000    812 synchronize.go:185] "Eviction manager: attempting to reclaim" resourceName="ephemeral-storage"`,
		`I1206 22:43:45.745475    812 synchronize.go:197] "Eviction manager: must evict pod(s) to reclaim" resourceName="ephemeral-storage"`,
		`I1206 22:43:55.000000    812 synchronize.go:197] "Eviction manager: must evict pod(s) to reclaim" resourceName="ephemeral-storage"`,
	}
	reclaim, kill := killCallTimes(journal, start, crossed)
	if want := at("22:43:45.720000"); !reclaim.Equal(want) {
		t.Errorf("reclaim start %v, want %v (the kill call's own pass, not the one that reclaimed enough)", reclaim, want)
	}
	if want := at("22:43:45.745475"); !kill.Equal(want) {
		t.Errorf("kill call %v, want %v (the first from a second before the crossing)", kill, want)
	}
	if r, k := killCallTimes(journal[:6], start, crossed); !r.IsZero() || !k.IsZero() {
		t.Errorf("without a kill call after the crossing: %v, %v, want zero times", r, k)
	}
}

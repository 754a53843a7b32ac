package e2ereport

import (
	"strings"
	"testing"
)

func TestUpstreamNodeTable(t *testing.T) {
	ours, err := LoadJUnitPasses([]string{"testdata/upstream-pass1.xml", "testdata/upstream-pass2.xml"})
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := LoadJUnitPasses([]string{"testdata/upstream-pass1.xml"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ours["[sig-node] Pods should run"]; ok {
		t.Errorf("a spec the focus left out was tallied: %+v", ours["[sig-node] Pods should run"])
	}
	if len(ours) != 3 {
		t.Errorf("%d specs tallied, want 3 (the suite node and the unselected spec left out): %v", len(ours), ours)
	}
	var b strings.Builder
	if err := RenderUpstreamNode(&b, "## table", []string{"evictkit", "upstream", "other"},
		map[string]map[string]*SpecTally{"evictkit": ours, "upstream": theirs}); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	// Written out by hand from the two fixtures.
	for _, want := range []string{
		"| [sig-node] DiskEviction [Feature:Eviction] should evict | 1 / 2 | 5m0s | 0 / 1 | 5m0s | not run | |",
		"| [sig-node] InodeEviction [Feature:Eviction] should evict | skipped ×2 | | skipped ×1 | | not run | |",
		"| [sig-node] MemoryEviction [Feature:Eviction] should evict | 2 / 2 | 2m0s | 1 / 1 | 2m0s | not run | |",
		"- [sig-node] DiskEviction [Feature:Eviction] should evict, evictkit: last failure: Timed out after 300s. pods still running",
		"- [sig-node] InodeEviction [Feature:Eviction] should evict, upstream: skipped: skipped - Too few inodes free on the host",
		"- evictkit: 3 specs: 1 passed every pass, 1 failed at least once, 1 skipped itself",
		"- upstream: 3 specs: 1 passed every pass, 1 failed at least once, 1 skipped itself",
		"- other: not run",
		"Specs whose outcome differs between evictkit and upstream (of 3 that all of them ran): 0",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "Pods should run") {
		t.Errorf("table lists an unselected spec:\n%s", got)
	}
}

func TestLoadJUnitPassesRejectsNonJUnit(t *testing.T) {
	if _, err := LoadJUnitPasses([]string{"upstreamnode.go"}); err == nil || !strings.Contains(err.Error(), "not a JUnit report") {
		t.Errorf("err = %v, want one naming a non-JUnit file", err)
	}
}

func TestUpstreamNodeDifferences(t *testing.T) {
	ours := map[string]*SpecTally{
		"a": {Passed: 2},
		"b": {Passed: 1, Failed: 1},
		"c": {Skipped: 1},
		"d": {Passed: 1},
	}
	theirs := map[string]*SpecTally{
		"a": {Passed: 1},
		"b": {Passed: 2},
		"c": {Passed: 1},
	}
	var b strings.Builder
	if err := RenderUpstreamNode(&b, "## t", []string{"evictkit", "upstream"},
		map[string]map[string]*SpecTally{"evictkit": ours, "upstream": theirs}); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	// d was run on ours only: not compared. a ended the same on both.
	for _, want := range []string{
		"Specs whose outcome differs between evictkit and upstream (of 3 that all of them ran): 2",
		"- b: evictkit failed at least once, upstream passed every pass",
		"- c: evictkit skipped itself, upstream passed every pass",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
	for _, bad := range []string{"- a: ", "- d: "} {
		if strings.Contains(got, bad) {
			t.Errorf("report lists %q as a difference:\n%s", bad, got)
		}
	}
}

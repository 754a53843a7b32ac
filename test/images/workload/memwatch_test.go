package main

import (
	"os"
	"path/filepath"
	"testing"
)

// A v1 node cgroup read by hand: 1000 MiB used, of which 300 MiB active
// and 100 MiB inactive file pages; 20 MiB dirty, 10 MiB under writeback,
// 50 MiB mapped.
const (
	oneMiB     = 1 << 20
	statV1Node = "cache 419430400\nrss 629145600\ntotal_active_file 314572800\ntotal_inactive_file 104857600\n" +
		"total_dirty 20971520\ntotal_writeback 10485760\ntotal_mapped_file 52428800\nactive_file 1\ninactive_file 2\n"
)

func TestSampleBothRules(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("memory.stat", statV1Node)
	write("memory.usage_in_bytes", "1048576000\n")
	s, err := newCgroupSampler(dir)
	if err != nil {
		t.Fatal(err)
	}
	u, err := s.sample()
	if err != nil {
		t.Fatal(err)
	}
	// Summary API: 1000 - 100 = 900 MiB. Reclaimable: clean unmapped file
	// pages are 300 + 100 - 20 - 10 - 50 = 320 MiB, so 1000 - 320 = 680.
	if got := u.workingSet(); got != 900*oneMiB {
		t.Errorf("workingSet = %d MiB, want 900", got/oneMiB)
	}
	if got := u.unreclaimable(); got != 680*oneMiB {
		t.Errorf("unreclaimable = %d MiB, want 680", got/oneMiB)
	}
}

func TestUnreclaimableNeverAboveWorkingSet(t *testing.T) {
	// Mostly dirty and mapped cache: the clean part (5 MiB) is less than
	// the inactive list (40 MiB), which the Summary API already discounts.
	u := memUsage{usage: 500 * oneMiB, activeFile: 60 * oneMiB, inactiveFile: 40 * oneMiB, dirty: 50 * oneMiB, writeback: 5 * oneMiB, mappedFile: 40 * oneMiB}
	if got, want := u.unreclaimable(), int64(460*oneMiB); got != want {
		t.Errorf("unreclaimable = %d MiB, want %d", got/oneMiB, want/oneMiB)
	}
	if got := (memUsage{usage: 10 * oneMiB, inactiveFile: 30 * oneMiB}).unreclaimable(); got != 0 {
		t.Errorf("unreclaimable past usage = %d, want 0", got)
	}
}

func TestSampleNamesMissingCount(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "memory.stat"), []byte("total_active_file 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "memory.usage_in_bytes"), []byte("5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := newCgroupSampler(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.sample(); err == nil {
		t.Fatal("sample of a memory.stat without total_inactive_file succeeded")
	}
}

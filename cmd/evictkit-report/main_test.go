package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Runs of different focuses on one kubelet add up in one table.
func TestUpstreamNodeTablesEveryFocus(t *testing.T) {
	dir := t.TempDir()
	fixture := func(src, dst string) {
		raw, err := os.ReadFile(filepath.Join("..", "..", "internal", "e2ereport", "testdata", src))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fixture("upstream-pass1.xml", "evictkit-0a1b2c3d-pass1.xml")
	fixture("upstream-pass2.xml", "evictkit-4e5f6a7b-pass1.xml")
	fixture("upstream-pass1.xml", "upstream-0a1b2c3d-pass1.xml")
	fixture("upstream-pass1.xml", "evictkit-0a1b2c3d-pass1-kubelet.log") // not a report
	var out strings.Builder
	if err := run([]string{"-upstream-node", dir}, &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"(evictkit 2 suite run(s), upstream 1 suite run(s))",
		// passed in pass2's fixture, failed in pass1's: one of two
		"| [sig-node] DiskEviction [Feature:Eviction] should evict | 1 / 2 | 5m0s | 0 / 1 | 5m0s |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
}

func TestUpstreamNodeNoReports(t *testing.T) {
	err := run([]string{"-upstream-node", t.TempDir()}, &strings.Builder{})
	if err == nil || !strings.Contains(err.Error(), "no JUnit reports") {
		t.Errorf("err = %v, want one saying there are no reports", err)
	}
}

func TestRuntimeFailureNeedsTheKubeletLog(t *testing.T) {
	err := run([]string{"-runtime-failure", "x.xml"}, &strings.Builder{})
	if err == nil || !strings.Contains(err.Error(), "-kubelet-log") {
		t.Errorf("err = %v, want one asking for -kubelet-log", err)
	}
}

func TestRuntimeFailurePrintsThePods(t *testing.T) {
	log := filepath.Join(t.TempDir(), "kubelet.log")
	line := `I1207 event.go:395] "Event occurred" object="ns/emptydir-disk-below-sizelimit-pod" fieldPath="spec.containers{c}" kind="Pod" apiVersion="v1" type="Warning" reason="Failed" message="Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to freeze"`
	if err := os.WriteFile(log, []byte(line+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	junit := filepath.Join("..", "..", "internal", "e2ereport", "testdata", "runtime-failed.xml")
	if err := run([]string{"-runtime-failure", junit, "-kubelet-log", log}, &out); err != nil {
		t.Fatal(err)
	}
	if want := "pod emptydir-disk-below-sizelimit-pod: Error: failed to create containerd task"; !strings.HasPrefix(out.String(), want) {
		t.Errorf("printed %q, want it to start with %q", out.String(), want)
	}
}

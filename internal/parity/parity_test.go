package parity

import (
	"flag"
	"fmt"
	"reflect"
	"testing"
	"time"

	ours "github.com/evictkit/evictkit/pkg/kubelet/eviction"
)

// shortRun is the scenarios of the short run (make test); make parity runs
// 5,000.
const shortRun = 300

// baseStage is set by make stage-tests for the series' commits before the
// manager is wired to the decision core, where the package is upstream's
// manager with the core beside it, unused: its outcomes depend on pod
// order as upstream's do.
var baseStage = flag.Bool("base-stage", false, "the package is upstream's manager with the core beside it (order-dependent like upstream)")

func TestParityShort(t *testing.T) {
	candidate := oursSubject
	candidate.orderDependent = *baseStage
	rep := run(candidate, 1, shortRun, 500, nil)
	t.Log(rep.CoverageLine())
	t.Log(rep)
	for _, d := range rep.Differences {
		t.Errorf("seed %d differs from upstream: %s", d.Seed, d.Diff)
	}
	// The short run must keep exercising every behaviour it reports on,
	// or its matches say less than they seem to.
	for _, rule := range coverageRules {
		if rep.Covered[rule.name] == 0 {
			t.Errorf("no scenario showed %q", rule.name)
		}
	}
}

// TestParityCatchesChangedManagers is the harness's negative control: a
// manager configured slightly differently from upstream must be reported
// as differing.
func TestParityCatchesChangedManagers(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tweak func(c *ours.Config, lsci *bool)
	}{
		{"grace period one second longer", func(c *ours.Config, _ *bool) { c.MaxPodGracePeriodSeconds++ }},
		{"pressure transition a minute longer", func(c *ours.Config, _ *bool) { c.PressureTransitionPeriod += time.Minute }},
		{"last threshold dropped", func(c *ours.Config, _ *bool) {
			if len(c.Thresholds) > 0 {
				c.Thresholds = c.Thresholds[:len(c.Thresholds)-1]
			}
		}},
		{"local storage isolation off", func(_ *ours.Config, lsci *bool) { *lsci = false }},
	} {
		// Also as an order-dependent candidate (as the series' first stages
		// are run): its redraws must not hide a real difference.
		for _, orderDependent := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/order-dependent=%t", tc.name, orderDependent), func(t *testing.T) {
				quietKlog()
				candidate := oursWith(tc.tweak)
				candidate.orderDependent = orderDependent
				for i := range uint64(shortRun) {
					if r := check(candidate, Generate(1+i), 50); r.Verdict == Differed {
						t.Logf("caught at seed %d: %s", r.Seed, r.Diff)
						return
					}
				}
				t.Errorf("no difference found in %d scenarios", shortRun)
			})
		}
	}
}

func TestGenerateIsAFunctionOfTheSeed(t *testing.T) {
	for seed := range uint64(50) {
		if a, b := Generate(seed), Generate(seed); !reflect.DeepEqual(a, b) {
			t.Fatalf("seed %d generated two different scenarios", seed)
		}
	}
	if reflect.DeepEqual(Generate(1), Generate(2)) {
		t.Fatal("seeds 1 and 2 generated the same scenario")
	}
}

func TestCanonicalAdmitMessage(t *testing.T) {
	for in, want := range map[string]string{
		"The node had condition: [MemoryPressure DiskPressure]. ": "The node had condition: [DiskPressure MemoryPressure]. ",
		"The node had condition: [PIDPressure]. ":                 "The node had condition: [PIDPressure]. ",
		"something else": "something else",
	} {
		if got := canonicalAdmitMessage(in); got != want {
			t.Errorf("canonicalAdmitMessage(%q) = %q, want %q", in, got, want)
		}
	}
}

//evictkit:file EvictionDryRun

package eviction

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-base/featuregate"
)

// FuzzDryRun runs FuzzDecide's scenarios through a manager with
// EvictionDryRun on (and the other decision gates as the scenario says):
// a dry run never kills a pod, never reports a node condition and admits
// what a node without pressure admits; on its first pass it reports as
// WouldEvict exactly the pods a manager without the gate evicts.
func FuzzDryRun(f *testing.F) {
	f.Add([]byte{})
	// FuzzDecide's named seeds: each reaches a path of the decision.
	for _, name := range fzPromises() {
		if data, err := readFuzzSeed(filepath.Join(fzDecideCorpus, name)); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := fzDecodeScenario(data)
		s.alpha.eachGate(func(gate featuregate.Feature, on bool) { setGateDuringTest(t, gate, on) })
		run := func(dryRun bool) (*mgrHarness, [][]string) {
			setGateDuringTest(t, evictionDryRun, dryRun)
			h := mgrNewHarness(t, Config{
				Thresholds:               s.thresholds,
				MaxPodGracePeriodSeconds: s.maxGrace,
				PressureTransitionPeriod: s.transition,
			}, s.localStorage, s.passes[0].summary)
			h.pods = s.pods
			h.disk.imageFs, h.disk.containerFs = s.layout.dedicatedImageFs, s.layout.splitContainerFs
			var perPass [][]string
			for i, p := range s.passes {
				if d := p.now.Sub(h.clock.Now()); d > 0 {
					h.clock.Step(d)
				}
				h.summary.set(p.summary)
				h.recorder.reset()
				_, _ = h.m.synchronize(context.Background(), h.disk, h.activePods)
				reason := Reason
				if dryRun {
					reason = wouldEvictReason
					if k := h.killer.get(); len(k) != 0 {
						t.Fatalf("pass %d: a dry run killed %s", i, k[0].pod.UID)
					}
					if h.m.IsUnderMemoryPressure() || h.m.IsUnderDiskPressure() || h.m.IsUnderPIDPressure() {
						t.Fatalf("pass %d: a dry run reported a node condition", i)
					}
					if r := mgrAdmit(h, pod("probe-besteffort")); !r.Admit {
						t.Fatalf("pass %d: a dry run rejected a BestEffort pod: %s", i, r.Message)
					}
				}
				var named []string
				for _, e := range h.recorder.byReason(reason) {
					p := e.object.(*v1.Pod)
					if refCritical(p) {
						t.Fatalf("pass %d: %s event on the critical pod %s", i, reason, p.UID)
					}
					named = append(named, fmt.Sprintf("%s %q", p.UID, e.message))
				}
				sort.Strings(named)
				perPass = append(perPass, named)
			}
			return h, perPass
		}
		_, dry := run(true)
		_, real := run(false)
		if fmt.Sprint(dry[0]) != fmt.Sprint(real[0]) {
			t.Fatalf("first pass: a dry run reported %v, without the gate the manager evicted %v", dry[0], real[0])
		}
	})
}

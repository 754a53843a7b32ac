//evictkit:file EvictionReclaimSized

package eviction

import (
	"maps"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/version"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// alphaGateSpec is the spec the kubelet registers for each of the
// package's gates in pkg/features (the patch that adds each behaviour
// writes the same spec there). Tests outside the kubelet register it
// themselves, for the gates of alphaFeatureRows.
var alphaGateSpec = featuregate.VersionedSpecs{{Version: version.MustParse("1.37"), Default: false, PreRelease: featuregate.Alpha}}

// isAlphaGate reports whether gate is one of the package's alpha gates.
func isAlphaGate(gate featuregate.Feature) bool {
	return slices.ContainsFunc(alphaFeatureRows, func(f alphaFeature) bool { return f.gate == gate })
}

// setGateDuringTest turns one of the package's gates on or off for the
// test, registering it first where pkg/features does not.
func setGateDuringTest(t *testing.T, gate featuregate.Feature, on bool) {
	t.Helper()
	if _, known := utilfeature.DefaultMutableFeatureGate.GetAll()[gate]; !known {
		if !isAlphaGate(gate) {
			t.Fatalf("no spec for gate %s", gate)
		}
		if err := utilfeature.DefaultMutableFeatureGate.AddVersioned(map[featuregate.Feature]featuregate.VersionedSpecs{gate: alphaGateSpec}); err != nil {
			t.Fatalf("registering gate %s: %v", gate, err)
		}
	}
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, gate, on)
}

func TestGateEnabled(t *testing.T) {
	if gateEnabled("NoSuchEvictionGate") {
		t.Error("an unregistered gate reads as on, want off")
	}
	for _, row := range alphaFeatureRows {
		gate := row.gate
		setGateDuringTest(t, gate, true)
		if !gateEnabled(gate) {
			t.Errorf("%s set on reads as off", gate)
		}
		setGateDuringTest(t, gate, false)
		if gateEnabled(gate) {
			t.Errorf("%s set off reads as on", gate)
		}
	}
}

// set turns an alpha gate of a decision's input on or off. It copies the
// set first: inputs copied from one another share it.
func (g *featureGates) set(gate featuregate.Feature, on bool) {
	alpha := maps.Clone(g.alpha)
	if alpha == nil {
		alpha = alphaGates{}
	}
	alpha[gate] = on
	g.alpha = alpha
}

// mgrEvictionGrace evicts one pod, whose terminationGracePeriodSeconds is
// podGrace, under a hard memory.available<1Gi threshold or a soft one with
// a minute's grace, with gate on or off and evictionMaxPodGracePeriod
// maxGrace, and returns the grace period the manager's kill asked for.
func mgrEvictionGrace(t *testing.T, gate featuregate.Feature, on, hardThreshold bool, maxGrace int64, podGrace *int64) int64 {
	t.Helper()
	setGateDuringTest(t, gate, on)
	th := soft(evictionapi.SignalMemoryAvailable, "1Gi", time.Minute)
	if hardThreshold {
		th = hard(evictionapi.SignalMemoryAvailable, "1Gi")
	}
	cfg := Config{PressureTransitionPeriod: 5 * time.Minute, MaxPodGracePeriodSeconds: maxGrace, Thresholds: []evictionapi.Threshold{th}}
	victim := pod("victim")
	victim.Spec.TerminationGracePeriodSeconds = podGrace
	h := mgrNewHarness(t, cfg, false, mgrMemoryPressureNode().summary(mgrEpoch, fakePodStats(victim, fakePodUsage{memWS: []int64{gi}, ephem: -1})))
	h.pods = []*v1.Pod{victim}
	if h.m.alpha[gate] != on {
		t.Fatalf("gate %s reads %v, want %v", gate, h.m.alpha[gate], on)
	}
	h.sync()
	if !hardThreshold {
		h.advance(time.Minute)
		h.sync()
	}
	kills := h.killer.get()
	if len(kills) != 1 {
		t.Fatalf("killed %v, want [victim]", h.killedNames())
	}
	if kills[0].grace == nil {
		t.Fatal("the kill asked for no grace period override")
	}
	return *kills[0].grace
}

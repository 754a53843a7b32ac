//evictkit:file EvictionReclaimSized

package eviction

import (
	"maps"
	"testing"

	"k8s.io/apimachinery/pkg/util/version"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
)

// alphaGateSpecs are the specs the kubelet registers for the package's
// gates in pkg/features (the patch that adds each behaviour writes the
// same spec there). Tests outside the kubelet register them themselves.
var alphaGateSpecs = map[featuregate.Feature]featuregate.VersionedSpecs{
	evictionReclaimSized: {{Version: version.MustParse("1.37"), Default: false, PreRelease: featuregate.Alpha}},
	//evictkit:begin EvictionFastPath
	evictionFastPath: {{Version: version.MustParse("1.37"), Default: false, PreRelease: featuregate.Alpha}},
	//evictkit:end EvictionFastPath
	//evictkit:begin EvictionExplain
	evictionExplain: {{Version: version.MustParse("1.37"), Default: false, PreRelease: featuregate.Alpha}},
	//evictkit:end EvictionExplain
	//evictkit:begin EvictionDryRun
	evictionDryRun: {{Version: version.MustParse("1.37"), Default: false, PreRelease: featuregate.Alpha}},
	//evictkit:end EvictionDryRun
	//evictkit:begin EvictionPSI
	evictionPSI: {{Version: version.MustParse("1.37"), Default: false, PreRelease: featuregate.Alpha}},
	//evictkit:end EvictionPSI
	//evictkit:begin EvictionCgroupV2Notifier
	evictionCgroupV2Notifier: {{Version: version.MustParse("1.37"), Default: false, PreRelease: featuregate.Alpha}},
	//evictkit:end EvictionCgroupV2Notifier
}

// setGateDuringTest turns one of the package's gates on or off for the
// test, registering it first where pkg/features does not.
func setGateDuringTest(t *testing.T, gate featuregate.Feature, on bool) {
	t.Helper()
	if _, known := utilfeature.DefaultMutableFeatureGate.GetAll()[gate]; !known {
		spec, ok := alphaGateSpecs[gate]
		if !ok {
			t.Fatalf("no spec for gate %s", gate)
		}
		if err := utilfeature.DefaultMutableFeatureGate.AddVersioned(map[featuregate.Feature]featuregate.VersionedSpecs{gate: spec}); err != nil {
			t.Fatalf("registering gate %s: %v", gate, err)
		}
	}
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, gate, on)
}

func TestGateEnabled(t *testing.T) {
	if gateEnabled("NoSuchEvictionGate") {
		t.Error("an unregistered gate reads as on, want off")
	}
	for gate := range alphaGateSpecs {
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

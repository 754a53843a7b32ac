//evictkit:file EvictionReclaimSized

package eviction

import (
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// The eviction manager's own alpha feature gates, each off by default.
// With every one of them off the manager behaves as upstream's. In the
// kubelet they are declared and registered with the other Kubernetes
// gates in pkg/features by the patch that adds the behaviour; this package
// names them so that it also builds against a pkg/features without them,
// where they are off. Each behaviour's own file names its gate and adds
// it to alphaGateRows.

// evictionReclaimSized: evict, in one pass, as many pods in rank order as
// the shortfall takes (reclaim_sized.go), instead of one per pass.
const evictionReclaimSized featuregate.Feature = "EvictionReclaimSized"

// alphaGate is one alpha gate and, where the behaviour needs more than
// the gate, what the manager's thresholds must hold for it to be on.
type alphaGate struct {
	gate     featuregate.Feature
	requires func([]evictionapi.Threshold) bool
}

// alphaGateRows are the package's alpha gates.
var alphaGateRows = []alphaGate{{gate: evictionReclaimSized}}

// addAlphaGate adds a behaviour's gate to alphaGateRows; a feature file
// calls it in a package-level declaration.
func addAlphaGate(g alphaGate) bool {
	alphaGateRows = append(alphaGateRows, g)
	return true
}

// gateEnabled reports whether a feature gate is on; a gate that is not
// registered is off. Gates are fixed once the kubelet has parsed its
// flags, so the manager reads them when it is created.
func gateEnabled(gate featuregate.Feature) bool {
	if _, known := utilfeature.DefaultMutableFeatureGate.GetAll()[gate]; !known {
		return false
	}
	return utilfeature.DefaultFeatureGate.Enabled(gate)
}

// alphaGates are the alpha gates that were on, with what they require,
// when the manager was created; a gate not in it is off.
type alphaGates map[featuregate.Feature]bool

// readAlphaGates reads the alpha gates for a manager of thresholds.
func readAlphaGates(thresholds []evictionapi.Threshold) alphaGates {
	g := alphaGates{}
	for _, row := range alphaGateRows {
		if gateEnabled(row.gate) && (row.requires == nil || row.requires(thresholds)) {
			g[row.gate] = true
		}
	}
	return g
}

//evictkit:file decision

package eviction

import (
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// The eviction manager's own alpha features, each behind a feature gate
// that is off by default; with every one of them off the manager behaves
// as upstream's. In the kubelet each gate is declared and registered with
// the other Kubernetes gates in pkg/features by the patch that adds the
// behaviour; this package names them so that it also builds against a
// pkg/features without them, where they are off. Each behaviour's own file
// names its gate and adds its row to alphaFeatureRows.

// alphaFeature is one alpha feature: its gate, what the manager's
// thresholds must hold for it to be on (when it needs more than the gate),
// and where it takes part in a pass. Each hook is optional.
type alphaFeature struct {
	gate     featuregate.Feature
	requires func([]evictionapi.Threshold) bool
	// init sets the feature up when the manager is created.
	init func(m *managerImpl)
	// observe adds the feature's observations to a pass's.
	observe func(m *managerImpl, logger klog.Logger, obs *observationSet, summary *statsapi.Summary)
	// input adds to the decision core's input.
	input func(m *managerImpl, in *decideInput)
	// decided sees a decision before it is carried out; true holds the
	// pass back from acting on it.
	decided func(m *managerImpl, logger klog.Logger, pods []*v1.Pod, stats podStatsIndex, d *decision) bool
	// publish replaces the node conditions the manager reports.
	publish func(m *managerImpl, logger klog.Logger, conditions []v1.NodeConditionType) []v1.NodeConditionType
	// evicting logs what it adds to a decision before its victims go.
	evicting func(logger klog.Logger, target *reclaimTarget)
}

// alphaFeatureRows are the package's alpha features, in gate name order
// once the package is initialized (addAlphaFeature).
var alphaFeatureRows []alphaFeature

// addAlphaFeature adds a behaviour's row to alphaFeatureRows, keeping
// them in gate name order, so hooks run in a fixed order whatever the
// order of initialization; a feature file calls it in a package-level
// declaration.
func addAlphaFeature(f alphaFeature) bool {
	alphaFeatureRows = append(alphaFeatureRows, f)
	slices.SortFunc(alphaFeatureRows, func(a, b alphaFeature) int { return strings.Compare(string(a.gate), string(b.gate)) })
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

// alphaFeatures are the rows of the alpha features that are on, in
// alphaFeatureRows' order; its methods run one hook of each.
type alphaFeatures []alphaFeature

// readAlphaFeatures reads the alpha gates for a manager of thresholds.
func readAlphaFeatures(thresholds []evictionapi.Threshold) (alphaGates, alphaFeatures) {
	gates, on := alphaGates{}, alphaFeatures{}
	for _, row := range alphaFeatureRows {
		if gateEnabled(row.gate) && (row.requires == nil || row.requires(thresholds)) {
			gates[row.gate] = true
			on = append(on, row)
		}
	}
	return gates, on
}

func (fs alphaFeatures) init(m *managerImpl) {
	for _, f := range fs {
		if f.init != nil {
			f.init(m)
		}
	}
}

func (fs alphaFeatures) observe(m *managerImpl, logger klog.Logger, obs *observationSet, summary *statsapi.Summary) {
	for _, f := range fs {
		if f.observe != nil {
			f.observe(m, logger, obs, summary)
		}
	}
}

func (fs alphaFeatures) input(m *managerImpl, in *decideInput) {
	for _, f := range fs {
		if f.input != nil {
			f.input(m, in)
		}
	}
}

// decided runs every feature's decided hook and reports whether any held
// the pass back.
func (fs alphaFeatures) decided(m *managerImpl, logger klog.Logger, pods []*v1.Pod, stats podStatsIndex, d *decision) bool {
	hold := false
	for _, f := range fs {
		if f.decided != nil && f.decided(m, logger, pods, stats, d) {
			hold = true
		}
	}
	return hold
}

func (fs alphaFeatures) publish(m *managerImpl, logger klog.Logger, conditions []v1.NodeConditionType) []v1.NodeConditionType {
	for _, f := range fs {
		if f.publish != nil {
			conditions = f.publish(m, logger, conditions)
		}
	}
	return conditions
}

func (fs alphaFeatures) evicting(logger klog.Logger, target *reclaimTarget) {
	for _, f := range fs {
		if f.evicting != nil {
			f.evicting(logger, target)
		}
	}
}

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
// where they are off.
const (
	// evictionReclaimSized: evict, in one pass, as many pods in rank order
	// as the shortfall takes (reclaim_sized.go), instead of one per pass.
	evictionReclaimSized featuregate.Feature = "EvictionReclaimSized"
	//evictkit:begin EvictionFastPath
	// evictionFastPath: watch the node's memory cgroup at a sub-second
	// interval and decide on fresh cgroup figures as soon as a hard memory
	// threshold is met (fastpath.go).
	evictionFastPath featuregate.Feature = "EvictionFastPath"
	//evictkit:end EvictionFastPath
	//evictkit:begin EvictionExplain
	// evictionExplain: say in each Evicted event why this pod was chosen,
	// and log the ranked pods with the decision (explain.go).
	evictionExplain featuregate.Feature = "EvictionExplain"
	//evictkit:end EvictionExplain
	//evictkit:begin EvictionDryRun
	// evictionDryRun: decide and report every eviction, kill nothing and
	// report no node condition (dry_run.go).
	evictionDryRun featuregate.Feature = "EvictionDryRun"
	//evictkit:end EvictionDryRun
	//evictkit:begin EvictionPSI
	// evictionPSI: memory pressure stall information as eviction signals
	// (psi.go).
	evictionPSI featuregate.Feature = "EvictionPSI"
	//evictkit:end EvictionPSI
	//evictkit:begin EvictionCgroupV2Notifier
	// evictionCgroupV2Notifier: on cgroup v2, memory notifiers woken by a
	// PSI trigger and memory.events (notifier_pressure_linux.go).
	evictionCgroupV2Notifier featuregate.Feature = "EvictionCgroupV2Notifier"
	//evictkit:end EvictionCgroupV2Notifier
)

// gateEnabled reports whether a feature gate is on; a gate that is not
// registered is off. Gates are fixed once the kubelet has parsed its
// flags, so the manager reads them when it is created.
func gateEnabled(gate featuregate.Feature) bool {
	if _, known := utilfeature.DefaultMutableFeatureGate.GetAll()[gate]; !known {
		return false
	}
	return utilfeature.DefaultFeatureGate.Enabled(gate)
}

// alphaGates are the package's alpha gates as the manager read them when
// it was created.
type alphaGates struct {
	reclaimSized bool
	//evictkit:begin EvictionFastPath
	fastPath bool
	//evictkit:end EvictionFastPath
	//evictkit:begin EvictionExplain
	explain bool
	//evictkit:end EvictionExplain
	//evictkit:begin EvictionDryRun
	dryRun bool
	//evictkit:end EvictionDryRun
	//evictkit:begin EvictionPSI
	// psi: the gate is on and a PSI threshold is configured.
	psi bool
	//evictkit:end EvictionPSI
	//evictkit:begin EvictionCgroupV2Notifier
	cgroupV2Notifier bool
	//evictkit:end EvictionCgroupV2Notifier
}

// readAlphaGates reads the alpha gates for a manager of thresholds.
func readAlphaGates(thresholds []evictionapi.Threshold) alphaGates {
	g := alphaGates{reclaimSized: gateEnabled(evictionReclaimSized)}
	//evictkit:begin EvictionFastPath
	g.fastPath = gateEnabled(evictionFastPath)
	//evictkit:end EvictionFastPath
	//evictkit:begin EvictionExplain
	g.explain = gateEnabled(evictionExplain)
	//evictkit:end EvictionExplain
	//evictkit:begin EvictionDryRun
	g.dryRun = gateEnabled(evictionDryRun)
	//evictkit:end EvictionDryRun
	//evictkit:begin EvictionPSI
	g.psi = gateEnabled(evictionPSI) && hasPSIThreshold(thresholds)
	//evictkit:end EvictionPSI
	//evictkit:begin EvictionCgroupV2Notifier
	g.cgroupV2Notifier = gateEnabled(evictionCgroupV2Notifier)
	//evictkit:end EvictionCgroupV2Notifier
	return g
}

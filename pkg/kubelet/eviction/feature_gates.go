//evictkit:file EvictionReclaimSized

package eviction

import (
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
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

package kubelet

import (
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/features"
)

// evictionAsksNoGrace reports whether a kill is an eviction that asks for a
// grace period of 0 while EvictionKillWithoutGrace is on.
func evictionAsksNoGrace(options *KillPodOptions) bool {
	if !utilfeature.DefaultFeatureGate.Enabled(features.EvictionKillWithoutGrace) {
		return false
	}
	override := options.PodTerminationGracePeriodSecondsOverride
	return options.Evict && override != nil && *override == 0
}

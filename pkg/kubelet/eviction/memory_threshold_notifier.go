//evictkit:file notifier

package eviction

import evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"

// memoryNotifierDescription names the memory threshold a ThresholdNotifier
// watches, e.g. "hard memory eviction threshold" or "soft allocatable memory
// eviction threshold".
func memoryNotifierDescription(t evictionapi.Threshold) string {
	kind := "soft "
	if isHardEvictionThreshold(t) {
		kind = "hard "
	}
	if isAllocatableEvictionThreshold(t) {
		kind += "allocatable "
	}
	return kind + "memory eviction threshold"
}

//evictkit:file EvictionCgroupV2Notifier
//go:build !linux

package eviction

import evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"

// newCgroupV2Notifier: there are no cgroups off Linux.
func newCgroupV2Notifier(evictionapi.Threshold, string, func(string)) (ThresholdNotifier, bool) {
	return nil, false
}

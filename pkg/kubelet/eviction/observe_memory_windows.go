//go:build windows

package eviction

import statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

// observeNodeMemory derives memory.available on Windows from the global
// commit charge, reported as a system container: capacity is available plus
// usage (the commit limit).
func observeNodeMemory(node *statsapi.NodeStats) (observation, bool) {
	c := findSystemContainer(node.SystemContainers, statsapi.SystemContainerWindowsGlobalCommitMemory)
	if c == nil || c.Memory == nil || c.Memory.AvailableBytes == nil || c.Memory.UsageBytes == nil {
		return observation{}, false
	}
	m := c.Memory
	return observation{
		available: int64(*m.AvailableBytes),
		capacity:  int64(*m.AvailableBytes + *m.UsageBytes),
		time:      m.Time.Time,
	}, true
}

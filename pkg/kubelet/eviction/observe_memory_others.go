//go:build !windows

package eviction

import statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

// observeNodeMemory derives memory.available from the node's memory stats:
// available bytes, against a capacity of available plus working set.
func observeNodeMemory(node *statsapi.NodeStats) (observation, bool) {
	return observeWorkingSet(node.Memory)
}

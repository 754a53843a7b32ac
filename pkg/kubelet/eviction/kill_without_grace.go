//evictkit:file EvictionKillWithoutGrace

package eviction

import "k8s.io/component-base/featuregate"

// evictionKillWithoutGrace: a hard eviction asks for a grace period of 0,
// and the kubelet (pod worker and runtime manager, patched with the gate)
// passes 0 on to the runtime, which kills the containers at once. Upstream
// asks for 1 s, which the runtime manager raises to 2 s: time enough for
// a workload that ignores SIGTERM and allocates fast to reach its cgroup's
// limit, so that the kernel OOM killer acts before the kubelet's kill.
const evictionKillWithoutGrace featuregate.Feature = "EvictionKillWithoutGrace"

var _ = addAlphaFeature(alphaFeature{gate: evictionKillWithoutGrace})

// hardEvictionGrace is the grace period a hard eviction asks for.
func hardEvictionGrace(gates featureGates) int64 {
	if gates.alpha[evictionKillWithoutGrace] {
		return 0
	}
	return hardEvictionGracePeriodSeconds
}

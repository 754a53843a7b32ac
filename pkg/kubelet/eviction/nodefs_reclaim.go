//evictkit:file EvictionNodeFsReclaim

package eviction

import (
	"k8s.io/component-base/featuregate"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// evictionNodeFsReclaim: with a dedicated image filesystem, nodefs
// pressure first removes dead containers, whose logs live on nodefs,
// before any pod is evicted.
const evictionNodeFsReclaim featuregate.Feature = "EvictionNodeFsReclaim"

var _ = addAlphaFeature(alphaFeature{gate: evictionNodeFsReclaim})

// nodeFsReclaimSteps is the node-level reclaim the gate adds where
// nodeReclaimSteps has none for a disk signal: on a node with a dedicated
// image filesystem, a nodefs signal (space or inodes) removes dead
// containers first. Their logs, under the kubelet's pod log directory,
// are on nodefs; their writable layers are on the image filesystem, so
// the step frees less there than on a single filesystem, and unused
// images, all on the image filesystem, free nothing on nodefs. Upstream
// (kubernetes#129616) evicts at once.
func nodeFsReclaimSteps(l fsLayout, s evictionapi.Signal) []reclaimStep {
	if l.kind() == layoutImageFs && signalFsRole(s) == roleNodeFs {
		return []reclaimStep{reclaimContainers}
	}
	return nil
}

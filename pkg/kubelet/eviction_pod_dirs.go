package kubelet

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/evictkit/evictkit/pkg/kubelet/eviction"
)

// evictionDiskInfo is what the eviction manager is started with when
// EvictionResumeAfterRestart is on: the stats provider's answers about the
// filesystem layout, and where each pod's directory is, for the records of
// evictions in progress that a restarted kubelet finishes.
type evictionDiskInfo struct {
	eviction.DiskInfoProvider
	podDir func(types.UID) string
}

// GetPodDir returns the pod's directory, as the kubelet's GetPodDir does.
func (d evictionDiskInfo) GetPodDir(podUID types.UID) string { return d.podDir(podUID) }

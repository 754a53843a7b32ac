package eviction

import (
	"context"
	"time"

	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// Manager watches eviction signals, reports node pressure and evicts pods
// to keep the node stable.
type Manager interface {
	// Start runs the monitoring loop every monitoringInterval until ctx is done.
	Start(ctx context.Context, diskInfoProvider DiskInfoProvider, podFunc ActivePodsFunc, podCleanedUpFunc PodCleanedUpFunc, monitoringInterval time.Duration)
	// IsUnderMemoryPressure reports whether the node has the MemoryPressure condition.
	IsUnderMemoryPressure() bool
	// IsUnderDiskPressure reports whether the node has the DiskPressure condition.
	IsUnderDiskPressure() bool
	// IsUnderPIDPressure reports whether the node has the PIDPressure condition.
	IsUnderPIDPressure() bool
}

// Config is the eviction configuration of a kubelet.
type Config struct {
	// PressureTransitionPeriod is how long a node condition stays set after
	// the last time one of its thresholds was observed as met.
	PressureTransitionPeriod time.Duration
	// MaxPodGracePeriodSeconds caps the termination grace period given to
	// pods evicted because a soft threshold was met.
	MaxPodGracePeriodSeconds int64
	// Thresholds are the eviction thresholds the manager enforces.
	Thresholds []evictionapi.Threshold
	// KernelMemcgNotification makes the manager arm memory cgroup threshold
	// notifications so that memory thresholds are acted on as soon as the
	// kernel reports them crossed, not only at the next monitoring tick.
	KernelMemcgNotification bool
	// PodCgroupRoot is the cgroup under which all pods run.
	PodCgroupRoot string
}

//evictkit:file wired

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

// Config is the eviction configuration of a kubelet. The fields are grouped
// by what they decide: which thresholds apply, how crossings are detected,
// and how the manager acts once one is met.
type Config struct {
	// Thresholds lists every hard and soft eviction threshold to enforce.
	Thresholds []evictionapi.Threshold

	// KernelMemcgNotification, when set, arms kernel memory cgroup
	// threshold events so a memory threshold is handled as soon as the
	// kernel reports it, instead of waiting for the next housekeeping tick.
	KernelMemcgNotification bool
	// PodCgroupRoot names the cgroup that contains every pod; the
	// allocatable memory notifier watches it.
	PodCgroupRoot string

	// MaxPodGracePeriodSeconds bounds the grace period a pod gets when it
	// is evicted for a soft threshold.
	MaxPodGracePeriodSeconds int64
	// PressureTransitionPeriod is how long a pressure condition is held
	// after its thresholds were last seen met, to avoid flapping.
	PressureTransitionPeriod time.Duration
}

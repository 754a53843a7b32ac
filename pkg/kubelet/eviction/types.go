package eviction

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

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

// DiskInfoProvider tells the manager how the node's filesystems are laid out.
type DiskInfoProvider interface {
	// HasDedicatedImageFs reports whether images live on a filesystem other than the kubelet's root.
	HasDedicatedImageFs(ctx context.Context) (bool, error)
	// HasDedicatedContainerFs reports whether container writable layers live on a filesystem other than the images'.
	HasDedicatedContainerFs(ctx context.Context) (bool, error)
}

// ImageGC removes images that no container uses.
type ImageGC interface {
	// DeleteUnusedImages removes every image not used by a container.
	DeleteUnusedImages(ctx context.Context) error
}

// ContainerGC removes dead containers.
type ContainerGC interface {
	// DeleteAllUnusedContainers removes every container that is not running,
	// including those of pods that terminated but are not deleted yet.
	DeleteAllUnusedContainers(ctx context.Context) error
}

// KillPodFunc stops a pod. fn, when not nil, is applied to the status the
// kubelet reports for the pod before it is killed. gracePeriodOverride, when
// not nil, replaces the pod's own termination grace period. The call returns
// once the pod's containers have stopped.
type KillPodFunc func(pod *v1.Pod, isEvicted bool, gracePeriodOverride *int64, fn func(*v1.PodStatus)) error

// MirrorPodFunc returns the mirror pod of a static pod and whether it exists.
type MirrorPodFunc func(*v1.Pod) (*v1.Pod, bool)

// ActivePodsFunc returns the pods bound to this kubelet that have not
// terminated.
type ActivePodsFunc func() []*v1.Pod

// PodCleanedUpFunc reports whether everything a pod held on the node
// (containers, volumes, cgroups) has been released.
type PodCleanedUpFunc func(*v1.Pod) bool

// CgroupNotifier delivers an event each time a watched cgroup attribute
// crosses a threshold.
type CgroupNotifier interface {
	// Start sends one value on eventCh per crossing until Stop is called.
	Start(ctx context.Context, eventCh chan<- struct{})
	// Stop ends notification and releases the notifier's file descriptors.
	Stop()
}

// NotifierFactory makes CgroupNotifiers.
type NotifierFactory interface {
	// NewCgroupNotifier returns a notifier for attribute of the cgroup at path
	// that fires when the attribute crosses threshold.
	NewCgroupNotifier(logger klog.Logger, path, attribute string, threshold int64) (CgroupNotifier, error)
}

// ThresholdNotifier keeps a cgroup notifier armed at the level where a
// memory eviction threshold is reached and calls its handler when it fires.
type ThresholdNotifier interface {
	// Start calls the handler for every notification until the notifier's
	// event source is closed.
	Start(ctx context.Context)
	// UpdateThreshold re-arms the notifier from recent stats so that it fires
	// where the threshold would be met now.
	UpdateThreshold(ctx context.Context, summary *statsapi.Summary) error
	// Description names the threshold this notifier watches.
	Description() string
}

//evictkit:file wired

package eviction

import (
	"context"

	v1 "k8s.io/api/core/v1"
)

// The hooks below are how the kubelet lets the eviction manager see its
// pods and act on the node.

// DiskInfoProvider tells the manager how the node's filesystems are laid out.
type DiskInfoProvider interface {
	// HasDedicatedImageFs reports whether images live on a filesystem other than the kubelet's root.
	HasDedicatedImageFs(ctx context.Context) (bool, error)
	// HasDedicatedContainerFs reports whether container writable layers live on a filesystem other than the images'.
	HasDedicatedContainerFs(ctx context.Context) (bool, error)
}

// ActivePodsFunc returns the pods bound to this kubelet that have not
// terminated.
type ActivePodsFunc func() []*v1.Pod

// ContainerGC removes dead containers.
type ContainerGC interface {
	// DeleteAllUnusedContainers removes every container that is not running,
	// including those of pods that terminated but are not deleted yet.
	DeleteAllUnusedContainers(ctx context.Context) error
}

// PodCleanedUpFunc reports whether everything a pod held on the node
// (containers, volumes, cgroups) has been released.
type PodCleanedUpFunc func(*v1.Pod) bool

// ImageGC removes images that no container uses.
type ImageGC interface {
	// DeleteUnusedImages removes every image not used by a container.
	DeleteUnusedImages(ctx context.Context) error
}

// KillPodFunc stops a pod. fn, when not nil, is applied to the status the
// kubelet reports for the pod before it is killed. gracePeriodOverride, when
// not nil, replaces the pod's own termination grace period. The call returns
// once the pod's containers have stopped.
type KillPodFunc func(pod *v1.Pod, isEvicted bool, gracePeriodOverride *int64, fn func(*v1.PodStatus)) error

// MirrorPodFunc returns the mirror pod of a static pod and whether it exists.
type MirrorPodFunc func(*v1.Pod) (*v1.Pod, bool)

//evictkit:file ranking

package eviction

import (
	v1 "k8s.io/api/core/v1"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// fsLayout is how the node's filesystems are arranged.
type fsLayout struct {
	// dedicatedImageFs: the runtime's images live apart from the kubelet's root filesystem.
	dedicatedImageFs bool
	// splitContainerFs: container writable layers live apart from images.
	splitContainerFs bool
}

// layoutKind names the three layouts upstream distinguishes.
type layoutKind int

const (
	// layoutSingle: one filesystem for everything.
	layoutSingle layoutKind = iota
	// layoutImageFs: images and writable layers on a dedicated imagefs.
	layoutImageFs
	// layoutSplit: images on imagefs, writable layers on nodefs.
	layoutSplit
)

// kind classifies the layout. A split without a dedicated imagefs is
// treated as a single filesystem, as upstream does.
func (l fsLayout) kind() layoutKind {
	switch {
	case l.dedicatedImageFs && l.splitContainerFs:
		return layoutSplit
	case l.dedicatedImageFs:
		return layoutImageFs
	default:
		return layoutSingle
	}
}

// reclaimStep is one node-level reclaim action.
type reclaimStep int

const (
	// reclaimContainers deletes dead containers.
	reclaimContainers reclaimStep = iota
	// reclaimImages deletes unused images.
	reclaimImages
)

func (s reclaimStep) String() string {
	if s == reclaimContainers {
		return "DeleteAllUnusedContainers"
	}
	return "DeleteUnusedImages"
}

// fsRole is which filesystem a disk signal watches.
type fsRole int

const (
	roleNone fsRole = iota
	roleNodeFs
	roleImageFs
	roleContainerFs
)

// signalFsRole returns the filesystem a signal watches.
func signalFsRole(s evictionapi.Signal) fsRole {
	switch s {
	case evictionapi.SignalNodeFsAvailable, evictionapi.SignalNodeFsInodesFree:
		return roleNodeFs
	case evictionapi.SignalImageFsAvailable, evictionapi.SignalImageFsInodesFree:
		return roleImageFs
	case evictionapi.SignalContainerFsAvailable, evictionapi.SignalContainerFsInodesFree:
		return roleContainerFs
	}
	return roleNone
}

// nodeReclaimSteps returns the node-level reclaim to try for a signal
// before evicting pods:
//
//	layout   nodefs            imagefs           containerfs
//	single   containers,images containers,images containers,images
//	imagefs  -                 containers,images containers,images
//	split    containers        images            containers
//
// Memory and PID signals have no node-level reclaim.
func nodeReclaimSteps(l fsLayout, s evictionapi.Signal) []reclaimStep {
	both := []reclaimStep{reclaimContainers, reclaimImages}
	role := signalFsRole(s)
	if role == roleNone {
		return nil
	}
	switch l.kind() {
	case layoutImageFs:
		if role == roleNodeFs {
			return nil
		}
		return both
	case layoutSplit:
		if role == roleImageFs {
			return []reclaimStep{reclaimImages}
		}
		return []reclaimStep{reclaimContainers}
	default:
		return both
	}
}

// usageParts selects which parts of a pod's local storage count against a
// disk signal.
type usageParts struct {
	rootfs, logs, volumes bool
}

// diskUsageParts returns what counts against a disk signal:
//
//	layout   nodefs                 imagefs/containerfs
//	single   rootfs, logs, volumes  rootfs, logs, volumes
//	imagefs  logs, volumes          rootfs
//	split    rootfs, logs, volumes  imagefs: nothing; containerfs as nodefs
//
// Upstream also names image layers for imagefs, but the Summary API has no
// per-pod figure for them, so they count as zero in both implementations.
func diskUsageParts(l fsLayout, s evictionapi.Signal) usageParts {
	all := usageParts{rootfs: true, logs: true, volumes: true}
	role := signalFsRole(s)
	switch l.kind() {
	case layoutImageFs:
		if role == roleNodeFs {
			return usageParts{logs: true, volumes: true}
		}
		return usageParts{rootfs: true}
	case layoutSplit:
		if role == roleImageFs {
			return usageParts{}
		}
		return all
	default:
		return all
	}
}

// rankClass is the ranking rule that applies to a signal.
type rankClass int

const (
	rankByMemory rankClass = iota
	rankByProcesses
	rankByDiskBytes
	rankByDiskInodes
)

// signalRankClass returns the ranking rule for a signal.
func signalRankClass(s evictionapi.Signal) rankClass {
	switch signalResource(s) {
	case v1.ResourceMemory:
		return rankByMemory
	case resourcePids:
		return rankByProcesses
	case resourceInodes:
		return rankByDiskInodes
	default:
		return rankByDiskBytes
	}
}

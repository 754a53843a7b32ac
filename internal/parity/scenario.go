// Package parity runs upstream's eviction manager (k8s.io/kubernetes v1.37.2,
// from the module cache) and evictkit's side by side through the package's
// exported API only, on the same generated node, pods, thresholds and passes,
// and compares what a kubelet would see of each: kills, pod statuses, events,
// image and container GC calls, the pressure conditions and pod admission.
package parity

import (
	"time"

	v1 "k8s.io/api/core/v1"
)

// Scenario is one generated node, its configuration and the passes the
// managers run on it. Everything a run depends on is in here (or derived
// from Seed), so a scenario is replayed from its seed alone.
type Scenario struct {
	Seed   uint64
	Layout Layout
	// LocalStorageIsolation is NewManager's localStorageCapacityIsolation.
	LocalStorageIsolation bool
	Config                ThresholdConfig
	PressureTransition    time.Duration
	MaxPodGracePeriod     int64
	Node                  Node
	Pods                  []*v1.Pod
	Passes                []Pass
	// Probes are the pods offered to the admit handler after every pass.
	Probes []*v1.Pod
}

// Layout is what the disk info provider reports.
type Layout struct {
	DedicatedImageFs bool
	SplitContainerFs bool
}

// ThresholdConfig is the kubelet configuration ParseThresholdConfig reads.
type ThresholdConfig struct {
	Allocatable []string
	Hard        map[string]string
	Soft        map[string]string
	Grace       map[string]string
	MinReclaim  map[string]string
}

// Node holds the node's capacities and what GC can free on it.
type Node struct {
	Memory, Allocatable int64
	NodeFs, ImageFs     Fs
	MaxPID              int64
	// ImageGCFrees and ContainerGCFrees are what a successful GC call
	// frees, once; the world tracks what is left.
	ImageGCFrees, ContainerGCFrees FsUse
}

// Fs is a filesystem's size.
type Fs struct{ Bytes, Inodes int64 }

// FsUse is space and inodes in use.
type FsUse struct{ Bytes, Inodes int64 }

// Pass is what one pass of the monitoring loop sees and how the node
// answers its calls.
type Pass struct {
	// Gap is how far the fake clock moves before the pass.
	Gap time.Duration
	// System is what the node uses besides the pods.
	System Usage
	// Pods is each pod's usage, by index into Scenario.Pods; a pod without
	// an entry has no stats this pass.
	Pods map[int]PodUsage
	// SummaryFails makes the pass's first summary call fail.
	SummaryFails bool
	// StaleStats reports the previous pass's stats times again.
	StaleStats bool
	// ImageGCFails, ContainerGCFails and KillFails inject errors.
	ImageGCFails, ContainerGCFails, KillFails bool
}

// Usage is what the system (not the pods) uses on the node.
type Usage struct {
	Memory    int64
	NodeFs    FsUse
	ImageFs   FsUse
	Processes int64
}

// PodUsage is one pod's usage in a pass, per container.
type PodUsage struct {
	Containers []ContainerUsage
	// Volumes is the usage of each emptyDir volume, by volume name.
	Volumes   map[string]FsUse
	Processes int64
}

// ContainerUsage is one container's usage.
type ContainerUsage struct {
	Name         string
	WorkingSet   int64
	Rootfs, Logs FsUse
}

//evictkit:file wired

package eviction

import (
	"context"

	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

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

// NotifierFactory makes CgroupNotifiers.
type NotifierFactory interface {
	// NewCgroupNotifier returns a notifier for attribute of the cgroup at path
	// that fires when the attribute crosses threshold.
	NewCgroupNotifier(logger klog.Logger, path, attribute string, threshold int64) (CgroupNotifier, error)
}

// CgroupNotifier delivers an event each time a watched cgroup attribute
// crosses a threshold.
type CgroupNotifier interface {
	// Start sends one value on eventCh per crossing until Stop is called.
	Start(ctx context.Context, eventCh chan<- struct{})
	// Stop ends notification and releases the notifier's file descriptors.
	Stop()
}

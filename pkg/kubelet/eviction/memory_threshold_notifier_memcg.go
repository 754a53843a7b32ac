//evictkit:file notifier
//go:build !windows

package eviction

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// memcgUsageAttribute is the memory cgroup file whose value the kernel
// compares with the armed level.
const memcgUsageAttribute = "memory.usage_in_bytes"

// memcgThresholdNotifier watches one memory eviction threshold through the
// memory cgroup: the node's root cgroup for memory.available, the pods'
// allocatable cgroup for allocatableMemory.available.
//
// The kernel can only watch memory usage, which counts inactive file pages
// the threshold does not (it is defined on the working set). So the notifier
// is re-armed from fresh stats now and then, each time at the usage that,
// given the inactive file pages of the moment, means the threshold is met.
type memcgThresholdNotifier struct {
	threshold evictionapi.Threshold
	cgroupDir string
	factory   NotifierFactory
	handler   func(string)
	// events receives the notifications of whichever kernel notifier is armed.
	events chan struct{}

	mu    sync.Mutex
	armed CgroupNotifier
}

var _ ThresholdNotifier = &memcgThresholdNotifier{}

// NewMemoryThresholdNotifier returns a ThresholdNotifier calling handler when
// threshold is crossed, as told by cgroup notifiers made by factory. For
// allocatable thresholds it watches cgroupRoot, the pods' cgroup, inside the
// memory controller's hierarchy; otherwise the hierarchy's root. The
// notifier is not armed until UpdateThreshold has been called.
func NewMemoryThresholdNotifier(logger klog.Logger, threshold evictionapi.Threshold, cgroupRoot string, factory NotifierFactory, handler func(string)) (ThresholdNotifier, error) {
	mount, err := memoryControllerMount()
	if err != nil {
		return nil, err
	}
	dir := mount
	if isAllocatableEvictionThreshold(threshold) {
		dir = filepath.Join(mount, cgroupRoot)
	}
	logger.V(4).Info("Eviction manager: watching memory cgroup", "threshold", memoryNotifierDescription(threshold), "cgroup", dir)
	return newMemcgThresholdNotifier(threshold, dir, factory, handler), nil
}

func newMemcgThresholdNotifier(threshold evictionapi.Threshold, cgroupDir string, factory NotifierFactory, handler func(string)) *memcgThresholdNotifier {
	return &memcgThresholdNotifier{
		threshold: threshold,
		cgroupDir: cgroupDir,
		factory:   factory,
		handler:   handler,
		events:    make(chan struct{}),
	}
}

// UpdateThreshold replaces the armed cgroup notifier by one set at the
// memory usage where the threshold is met according to summary.
func (m *memcgThresholdNotifier) UpdateThreshold(ctx context.Context, summary *statsapi.Summary) error {
	logger := klog.FromContext(ctx)
	stats, err := m.watchedMemory(summary)
	if err != nil {
		return err
	}
	level := memcgUsageLevel(m.threshold, stats)
	logger.V(3).Info("Eviction manager: arming memory notifier", "notifier", m.Description(), "usageBytes", level)

	m.mu.Lock()
	defer m.mu.Unlock()
	if m.armed != nil {
		m.armed.Stop()
		m.armed = nil
	}
	next, err := m.factory.NewCgroupNotifier(logger, m.cgroupDir, memcgUsageAttribute, level)
	if err != nil {
		return fmt.Errorf("arming the %s at %d bytes: %w", m.Description(), level, err)
	}
	m.armed = next
	go next.Start(ctx, m.events)
	return nil
}

// watchedMemory picks the memory stats of the cgroup the notifier watches
// and checks that every figure needed is there.
func (m *memcgThresholdNotifier) watchedMemory(summary *statsapi.Summary) (*statsapi.MemoryStats, error) {
	if summary == nil {
		return nil, errors.New("no stats summary")
	}
	stats := summary.Node.Memory
	source := "node"
	if isAllocatableEvictionThreshold(m.threshold) {
		source = statsapi.SystemContainerPods + " system container"
		pods := findSystemContainer(summary.Node.SystemContainers, statsapi.SystemContainerPods)
		if pods == nil {
			return nil, fmt.Errorf("summary has no %q system container", statsapi.SystemContainerPods)
		}
		stats = pods.Memory
	}
	switch {
	case stats == nil:
		return nil, fmt.Errorf("summary has no memory stats for the %s", source)
	case stats.UsageBytes == nil, stats.WorkingSetBytes == nil, stats.AvailableBytes == nil:
		return nil, fmt.Errorf("memory stats of the %s lack usage, working set or available bytes: %+v", source, *stats)
	}
	return stats, nil
}

// memcgUsageLevel converts the threshold, defined on available memory, into
// a level of memory usage. Available memory is capacity minus working set,
// and usage is working set plus inactive file pages; so the threshold is met
// when usage reaches capacity - threshold + inactive file.
func memcgUsageLevel(t evictionapi.Threshold, stats *statsapi.MemoryStats) int64 {
	capacity := int64(*stats.AvailableBytes + *stats.WorkingSetBytes)
	inactiveFile := int64(*stats.UsageBytes) - int64(*stats.WorkingSetBytes)
	level := resource.NewQuantity(capacity, resource.BinarySI)
	level.Sub(*thresholdLevel(t, capacity, false))
	level.Add(*resource.NewQuantity(inactiveFile, resource.BinarySI))
	return level.Value()
}

// Start calls the handler for every notification until ctx is done, then
// disarms the notifier.
func (m *memcgThresholdNotifier) Start(ctx context.Context) {
	logger := klog.FromContext(ctx)
	description := m.Description()
	logger.Info("Eviction manager: memory threshold notifier started", "notifier", description)
	for {
		select {
		case <-m.events:
			m.handler(fmt.Sprintf("eviction manager: %s crossed", description))
		case <-ctx.Done():
			m.mu.Lock()
			if m.armed != nil {
				m.armed.Stop()
				m.armed = nil
			}
			m.mu.Unlock()
			return
		}
	}
}

// Description names the watched threshold.
func (m *memcgThresholdNotifier) Description() string {
	return memoryNotifierDescription(m.threshold)
}

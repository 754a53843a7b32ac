//evictkit:file notifier
//go:build windows

package eviction

import (
	"context"
	"time"

	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
	"k8s.io/kubernetes/pkg/kubelet/winstats"
)

// commitThresholdNotifier stands in for the memory cgroup notifier on
// Windows, which has no such kernel facility: it samples the system commit
// charge every notifierRefreshInterval and calls the handler whenever the
// commit still available is at or below the threshold.
type commitThresholdNotifier struct {
	threshold evictionapi.Threshold
	handler   func(string)
}

var _ ThresholdNotifier = &commitThresholdNotifier{}

// NewMemoryThresholdNotifier returns a ThresholdNotifier polling the commit
// charge; cgroupRoot and factory are not used on Windows.
func NewMemoryThresholdNotifier(logger klog.Logger, threshold evictionapi.Threshold, cgroupRoot string, factory NotifierFactory, handler func(string)) (ThresholdNotifier, error) {
	logger.V(4).Info("Eviction manager: memory threshold notifier polls the commit charge", "threshold", memoryNotifierDescription(threshold))
	return &commitThresholdNotifier{threshold: threshold, handler: handler}, nil
}

// Start samples memory until ctx is done.
func (m *commitThresholdNotifier) Start(ctx context.Context) {
	logger := klog.FromContext(ctx)
	description := m.Description()
	logger.Info("Eviction manager: memory threshold notifier started", "notifier", description)
	ticker := time.NewTicker(notifierRefreshInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			if m.met(logger) {
				m.handler("eviction manager: " + description + " crossed")
			}
		}
	}
}

// met reports whether the available commit is at or below the threshold.
func (m *commitThresholdNotifier) met(logger klog.Logger) bool {
	info, err := winstats.GetPerformanceInfo()
	if err != nil {
		logger.Error(err, "Eviction manager: reading the commit charge failed")
		return false
	}
	limit := int64(info.CommitLimitPages * info.PageSize)
	available := limit - int64(info.CommitTotalPages*info.PageSize)
	return available <= thresholdLevel(m.threshold, limit, false).Value()
}

// UpdateThreshold does nothing: the level is recomputed at every sample.
func (m *commitThresholdNotifier) UpdateThreshold(context.Context, *statsapi.Summary) error {
	return nil
}

// Description names the watched threshold.
func (m *commitThresholdNotifier) Description() string {
	return memoryNotifierDescription(m.threshold)
}

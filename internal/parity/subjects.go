package parity

import (
	"context"

	v1 "k8s.io/api/core/v1"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"

	ours "github.com/evictkit/evictkit/pkg/kubelet/eviction"
	upstream "k8s.io/kubernetes/pkg/kubelet/eviction"
)

// subject is one eviction package, seen through its exported API.
type subject struct {
	name  string
	parse func(c ThresholdConfig) ([]evictionapi.Threshold, error)
	start func(ctx context.Context, h *harness, thresholds []evictionapi.Threshold) instance
	// orderDependent: the subject may, like upstream, decide differently
	// for another order of the active pods, so that is not a difference.
	orderDependent bool
}

// instance is a started manager.
type instance struct {
	pressure func() (memory, disk, pid bool)
	admit    func(ctx context.Context, attrs *lifecycle.PodAdmitAttributes) lifecycle.PodAdmitResult
}

// pressureReporter is the part of both packages' Manager the driver reads.
type pressureReporter interface {
	IsUnderMemoryPressure() bool
	IsUnderDiskPressure() bool
	IsUnderPIDPressure() bool
}

func instanceOf(m pressureReporter, admit lifecycle.PodAdmitHandler) instance {
	return instance{
		pressure: func() (bool, bool, bool) {
			return m.IsUnderMemoryPressure(), m.IsUnderDiskPressure(), m.IsUnderPIDPressure()
		},
		admit: admit.Admit,
	}
}

var nodeRef = &v1.ObjectReference{Kind: "Node", Name: "node", UID: "node"}

var upstreamSubject = subject{
	name: "upstream",
	parse: func(c ThresholdConfig) ([]evictionapi.Threshold, error) {
		return upstream.ParseThresholdConfig(c.Allocatable, c.Hard, c.Soft, c.Grace, c.MinReclaim)
	},
	start: func(ctx context.Context, h *harness, thresholds []evictionapi.Threshold) instance {
		s := h.w.s
		cfg := upstream.Config{
			PressureTransitionPeriod: s.PressureTransition,
			MaxPodGracePeriodSeconds: s.MaxPodGracePeriod,
			Thresholds:               thresholds,
		}
		m, admit := upstream.NewManager(h, cfg, h.kill, imageGC{h}, containerGC{h}, h, nodeRef, h.clock, s.LocalStorageIsolation)
		m.Start(ctx, diskInfo(s.Layout), h.activePods, h.cleanedUp, 0)
		return instanceOf(m, admit)
	},
}

var oursSubject = oursWith(nil)

// oursWith is evictkit's manager, its configuration changed by tweak (the
// negative controls of the tests).
func oursWith(tweak func(c *ours.Config, localStorageIsolation *bool)) subject {
	return subject{
		name: "evictkit",
		parse: func(c ThresholdConfig) ([]evictionapi.Threshold, error) {
			return ours.ParseThresholdConfig(c.Allocatable, c.Hard, c.Soft, c.Grace, c.MinReclaim)
		},
		start: func(ctx context.Context, h *harness, thresholds []evictionapi.Threshold) instance {
			s := h.w.s
			cfg := ours.Config{
				PressureTransitionPeriod: s.PressureTransition,
				MaxPodGracePeriodSeconds: s.MaxPodGracePeriod,
				Thresholds:               thresholds,
			}
			lsci := s.LocalStorageIsolation
			if tweak != nil {
				tweak(&cfg, &lsci)
			}
			m, admit := ours.NewManager(h, cfg, h.kill, imageGC{h}, containerGC{h}, h, nodeRef, h.clock, lsci)
			m.Start(ctx, diskInfo(s.Layout), h.activePods, h.cleanedUp, 0)
			return instanceOf(m, admit)
		},
	}
}

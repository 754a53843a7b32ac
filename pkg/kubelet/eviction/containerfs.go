//evictkit:file wired

package eviction

import (
	"errors"
	"fmt"

	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// containerFsSlot is one containerfs threshold the manager derives: the
// containerfs signal, whether it is the hard or the soft threshold, and the
// nodefs and imagefs signals it may be copied from.
type containerFsSlot struct {
	signal  evictionapi.Signal
	hard    bool
	nodeFs  evictionapi.Signal
	imageFs evictionapi.Signal
}

var containerFsSlots = [...]containerFsSlot{
	{evictionapi.SignalContainerFsAvailable, true, evictionapi.SignalNodeFsAvailable, evictionapi.SignalImageFsAvailable},
	{evictionapi.SignalContainerFsAvailable, false, evictionapi.SignalNodeFsAvailable, evictionapi.SignalImageFsAvailable},
	{evictionapi.SignalContainerFsInodesFree, true, evictionapi.SignalNodeFsInodesFree, evictionapi.SignalImageFsInodesFree},
	{evictionapi.SignalContainerFsInodesFree, false, evictionapi.SignalNodeFsInodesFree, evictionapi.SignalImageFsInodesFree},
}

// UpdateContainerFsThresholds derives the containerfs thresholds from the
// filesystem that holds container writable layers: nodefs on a single
// filesystem or when images and containers are split, imagefs when a
// dedicated imagefs holds both. containerfs thresholds given by the user
// are overridden (and reported in the returned error, with the thresholds
// still returned); missing ones are appended. When neither an imagefs nor a
// split exists but separateContainerImageFs is set, nothing is derived.
func UpdateContainerFsThresholds(thresholds []evictionapi.Threshold, imageFs, separateContainerImageFs bool) ([]evictionapi.Threshold, error) {
	var errs []error
	existing := [len(containerFsSlots)]int{-1, -1, -1, -1}
	for i, t := range thresholds {
		for s, slot := range containerFsSlots {
			if t.Signal == slot.signal && isHardEvictionThreshold(t) == slot.hard {
				existing[s] = i
				errs = append(errs, fmt.Errorf("%s threshold on %s was configured; it is derived from the filesystem layout instead and the configured value is ignored", hardness(slot.hard), slot.signal))
			}
		}
	}
	if separateContainerImageFs && !imageFs {
		return thresholds, errors.Join(errs...)
	}
	fromImageFs := imageFs && !separateContainerImageFs
	for s, slot := range containerFsSlots {
		source := slot.nodeFs
		if fromImageFs {
			source = slot.imageFs
		}
		src := lastThreshold(thresholds, source, slot.hard)
		derived := evictionapi.Threshold{
			Signal:     slot.signal,
			Operator:   src.Operator,
			Value:      src.Value,
			MinReclaim: src.MinReclaim,
		}
		if !slot.hard {
			derived.GracePeriod = src.GracePeriod
		}
		if existing[s] >= 0 {
			thresholds[existing[s]] = derived
		} else {
			thresholds = append(thresholds, derived)
		}
	}
	return thresholds, errors.Join(errs...)
}

// lastThreshold returns the last hard (or soft) threshold on signal, or the
// zero threshold when there is none.
func lastThreshold(thresholds []evictionapi.Threshold, signal evictionapi.Signal, hard bool) evictionapi.Threshold {
	var found evictionapi.Threshold
	for _, t := range thresholds {
		if t.Signal == signal && isHardEvictionThreshold(t) == hard {
			found = t
		}
	}
	return found
}

func hardness(hard bool) string {
	if hard {
		return "hard"
	}
	return "soft"
}

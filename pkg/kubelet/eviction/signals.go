package eviction

import (
	v1 "k8s.io/api/core/v1"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

//evictkit:begin wired

// Resources the manager reclaims that are not v1 resource names of their own.
const (
	// resourceInodes counts inodes on a local filesystem.
	resourceInodes v1.ResourceName = "inodes"
	// resourcePids counts process IDs.
	resourcePids v1.ResourceName = "pids"
)

//evictkit:end wired

// signalInfo is what the manager knows about one eviction signal.
type signalInfo struct {
	signal    evictionapi.Signal
	resource  v1.ResourceName
	condition v1.NodeConditionType
	rule      *signalRule
}

// signalTable lists every supported signal. Its order breaks ties in the
// reclaim order when several thresholds are actionable in the same pass
// (see sortByReclaimOrder): upstream leaves that order to map iteration,
// and this table's order is one of its possible outcomes.
var signalTable = [...]signalInfo{
	{evictionapi.SignalMemoryAvailable, v1.ResourceMemory, v1.NodeMemoryPressure, availableRule},
	{evictionapi.SignalAllocatableMemoryAvailable, v1.ResourceMemory, v1.NodeMemoryPressure, availableRule},
	//evictkit:begin EvictionPSI
	{signalMemoryPSISome, v1.ResourceMemory, v1.NodeMemoryPressure, psiRule},
	{signalMemoryPSIFull, v1.ResourceMemory, v1.NodeMemoryPressure, psiRule},
	//evictkit:end EvictionPSI
	{evictionapi.SignalNodeFsAvailable, v1.ResourceEphemeralStorage, v1.NodeDiskPressure, availableRule},
	{evictionapi.SignalNodeFsInodesFree, resourceInodes, v1.NodeDiskPressure, availableRule},
	{evictionapi.SignalImageFsAvailable, v1.ResourceEphemeralStorage, v1.NodeDiskPressure, availableRule},
	{evictionapi.SignalImageFsInodesFree, resourceInodes, v1.NodeDiskPressure, availableRule},
	{evictionapi.SignalContainerFsAvailable, v1.ResourceEphemeralStorage, v1.NodeDiskPressure, availableRule},
	{evictionapi.SignalContainerFsInodesFree, resourceInodes, v1.NodeDiskPressure, availableRule},
	{evictionapi.SignalPIDAvailable, resourcePids, v1.NodePIDPressure, availableRule},
}

// numSignals is the number of supported signals.
const numSignals = len(signalTable)

// signalID is a signal's position in signalTable.
type signalID int

// signalIDs maps a signal name to its position in signalTable.
var signalIDs = func() map[evictionapi.Signal]signalID {
	ids := make(map[evictionapi.Signal]signalID, numSignals)
	for i, info := range signalTable {
		ids[info.signal] = signalID(i)
	}
	return ids
}()

// lookupSignal returns the position of a signal in signalTable.
func lookupSignal(signal evictionapi.Signal) (signalID, bool) {
	id, ok := signalIDs[signal]
	return id, ok
}

//evictkit:begin wired

// validSignal reports whether the manager supports signal.
func validSignal(signal evictionapi.Signal) bool {
	_, ok := signalIDs[signal]
	return ok
}

//evictkit:end wired

// signalResource returns the resource reclaimed for a signal, or "" when
// the signal is unknown.
func signalResource(signal evictionapi.Signal) v1.ResourceName {
	if id, ok := lookupSignal(signal); ok {
		return signalTable[id].resource
	}
	return ""
}

// isMemorySignal reports whether a signal measures memory.
func isMemorySignal(signal evictionapi.Signal) bool {
	return signal == evictionapi.SignalMemoryAvailable || signal == evictionapi.SignalAllocatableMemoryAvailable
}

// conditionOrder is the fixed order in which node conditions are reported.
var conditionOrder = [...]v1.NodeConditionType{v1.NodeMemoryPressure, v1.NodeDiskPressure, v1.NodePIDPressure}

// conditionIndex returns the position of a condition in conditionOrder.
func conditionIndex(c v1.NodeConditionType) int {
	for i, known := range conditionOrder {
		if known == c {
			return i
		}
	}
	return -1
}

//evictkit:begin wired

// hasNodeCondition reports whether list contains c.
func hasNodeCondition(list []v1.NodeConditionType, c v1.NodeConditionType) bool {
	for _, have := range list {
		if have == c {
			return true
		}
	}
	return false
}

//evictkit:end wired

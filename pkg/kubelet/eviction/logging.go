//evictkit:file wired

package eviction

import (
	"k8s.io/klog/v2"
)

// maxRankedInLog is how many ranked pods are logged at default verbosity.
const maxRankedInLog = 10

// logObservations logs every observed signal at verbosity 3.
func logObservations(logger klog.Logger, what string, obs *observationSet) {
	if !logger.V(3).Enabled() {
		return
	}
	for id, info := range signalTable {
		if !obs.seen[id] {
			continue
		}
		ob := obs.obs[id]
		logger.V(3).Info("Eviction manager: observed signal", "log", what, "signal", info.signal, "resourceName", info.resource,
			"available", ob.available, "capacity", ob.capacity, "time", ob.time)
	}
}

// logRanking logs the ranked pods with why each ranks where it does: the
// first maxRankedInLog at default verbosity, all of them at verbosity 4.
func logRanking(logger klog.Logger, target *reclaimTarget) {
	limit := len(target.ranked)
	if !logger.V(4).Enabled() && limit > maxRankedInLog {
		limit = maxRankedInLog
	}
	ranked := make([]string, 0, limit)
	for i := 0; i < limit; i++ {
		c := &target.ranked[i]
		ranked = append(ranked, klog.KObj(c.pod).String()+": "+c.reason(target.class))
	}
	logger.Info("Eviction manager: pods ranked for eviction", "signal", target.threshold.Signal, "total", len(target.ranked), "ranked", ranked)
}

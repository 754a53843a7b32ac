//evictkit:file EvictionDryRun

package eviction

import (
	"slices"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-base/featuregate"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"
)

// evictionDryRun: decide and report every eviction, kill nothing and
// report no node condition.
const evictionDryRun featuregate.Feature = "EvictionDryRun"

var _ = addAlphaFeature(alphaFeature{
	gate: evictionDryRun,
	init: func(*managerImpl) { registerDryRun() },
	// The ledger forgets pods that are gone and signals no longer met.
	decided: func(m *managerImpl, _ klog.Logger, pods []*v1.Pod, _ podStatsIndex, d *decision) bool {
		m.dryRunLedger.retain(activeUIDs(pods), standingSignals(d))
		return false
	},
	// Conditions are logged, never reported.
	publish: func(m *managerImpl, logger klog.Logger, conditions []v1.NodeConditionType) []v1.NodeConditionType {
		m.dryRunConditions(logger, conditions)
		return nil
	},
})

// Dry run (EvictionDryRun, alpha): the manager observes, decides and
// reports, and kills nothing. A pod it would evict gets a WouldEvict event
// and a count in kubelet_evictions_dry_run, once per signal while the
// threshold stays met; node conditions are logged, not reported (they
// would taint the node and turn pods away); node-level reclaim runs, as it
// kills nothing.

// wouldEvictReason is the reason of the event a dry run records on a pod it
// would have evicted.
const wouldEvictReason = "WouldEvict"

// dryRunEvictions counts the evictions a dry run reported.
var dryRunEvictions = metrics.NewCounterVec(
	&metrics.CounterOpts{
		Subsystem:      "kubelet",
		Name:           "evictions_dry_run",
		Help:           "Cumulative number of pod evictions the eviction manager would have made, by eviction signal (EvictionDryRun)",
		StabilityLevel: metrics.ALPHA,
	},
	[]string{"eviction_signal"},
)

var registerDryRunMetrics sync.Once

// registerDryRun registers kubelet_evictions_dry_run with the kubelet's
// other metrics (the legacy registry), once.
func registerDryRun() {
	registerDryRunMetrics.Do(func() { legacyregistry.MustRegister(dryRunEvictions) })
}

// dryRunKey is one reported decision: a pod, for a signal or limit.
type dryRunKey struct {
	uid    types.UID
	signal string
}

// dryRunLedger remembers the decisions a dry run has reported. It is safe
// for concurrent use (reclaim-sized victims are reported concurrently).
type dryRunLedger struct {
	mu         sync.Mutex
	reported   map[dryRunKey]bool
	conditions []v1.NodeConditionType
}

// first records a decision and reports whether it is new.
func (l *dryRunLedger) first(k dryRunKey) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.reported[k] {
		return false
	}
	if l.reported == nil {
		l.reported = map[dryRunKey]bool{}
	}
	l.reported[k] = true
	return true
}

// retain forgets every reported decision whose pod is not in active or
// whose signal is not in standing.
func (l *dryRunLedger) retain(active map[types.UID]bool, standing map[string]bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k := range l.reported {
		if !active[k.uid] || !standing[k.signal] {
			delete(l.reported, k)
		}
	}
}

// conditionsChanged records the conditions a pass would report and
// reports whether they differ from the last ones.
func (l *dryRunLedger) conditionsChanged(c []v1.NodeConditionType) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if slices.Equal(l.conditions, c) {
		return false
	}
	l.conditions = slices.Clone(c)
	return true
}

// standingSignals are the signals and local storage limits a pass's
// decision still stands on: its actionable thresholds' signals and the
// limits its local storage victims exceed.
func standingSignals(d *decision) map[string]bool {
	out := map[string]bool{}
	if d.target != nil {
		for _, t := range d.target.actionable {
			out[string(t.Signal)] = true
		}
	}
	for _, v := range d.storageVictims {
		out[v.limit] = true
	}
	return out
}

// activeUIDs are the UIDs of pods.
func activeUIDs(pods []*v1.Pod) map[types.UID]bool {
	out := make(map[types.UID]bool, len(pods))
	for _, p := range pods {
		out[p.UID] = true
	}
	return out
}

// wouldEvict reports an eviction a dry run would have made, unless it was
// reported already.
func (m *managerImpl) wouldEvict(logger klog.Logger, e *podEviction, eventMessage string) {
	if !m.dryRunLedger.first(dryRunKey{uid: e.pod.UID, signal: e.signal}) {
		logger.V(4).Info("Eviction manager: dry run: would still evict pod", "pod", klog.KObj(e.pod), "signal", e.signal)
		return
	}
	//nolint:forbidigo // the annotated event API is the one the kubelet records with.
	m.recorder.AnnotatedEventf(e.pod, e.annotations, v1.EventTypeWarning, wouldEvictReason, "%s", eventMessage)
	dryRunEvictions.WithLabelValues(e.signal).Inc()
	logger.Info("Eviction manager: dry run: would evict pod", "pod", klog.KObj(e.pod), "podUID", e.pod.UID,
		"signal", e.signal, "gracePeriod", e.gracePeriodSeconds, "message", eventMessage)
}

// dryRunConditions logs the node conditions a dry run would report, when
// they change.
func (m *managerImpl) dryRunConditions(logger klog.Logger, conditions []v1.NodeConditionType) {
	if m.dryRunLedger.conditionsChanged(conditions) {
		logger.Info("Eviction manager: dry run: would report node conditions", "nodeConditions", conditions)
	}
}

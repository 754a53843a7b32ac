//evictkit:file EvictionPSI

package eviction

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/component-base/featuregate"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// evictionPSI: memory pressure stall information as eviction signals; on
// for a manager only with a PSI threshold configured.
const evictionPSI featuregate.Feature = "EvictionPSI"

var _ = addAlphaFeature(alphaFeature{
	gate:     evictionPSI,
	requires: hasPSIThreshold,
	init:     func(m *managerImpl) { m.readPressure = readProcPressureMemory },
	observe:  (*managerImpl).observePSI,
})

// Memory pressure stall information as eviction signals (EvictionPSI,
// alpha): memory.psi.some.avg10 and memory.psi.full.avg10, the share in
// percent of the last 10 s in which some (or all non-idle) tasks waited
// for memory, met above the threshold's value. They report MemoryPressure
// and rank pods as memory.available does; a pass evicts one pod, with no
// minimum reclaim, and none follows while the average still shows the
// last one's relief (psiSettling). Figures come from the Summary API's
// node PSI where it has them, else /proc/pressure/memory. A stall says
// whether the node suffers; memory.available only how much is left.

const (
	// signalMemoryPSISome and signalMemoryPSIFull are the signals.
	signalMemoryPSISome evictionapi.Signal = "memory.psi.some.avg10"
	signalMemoryPSIFull evictionapi.Signal = "memory.psi.full.avg10"
	// opGreaterThan is the operator of thresholds on signals that grow
	// with pressure.
	opGreaterThan evictionapi.ThresholdOperator = "GreaterThan"
	// psiScale: observations hold stall shares in thousandths of a
	// percent (what a threshold quantity's MilliValue gives), out of
	// psiCapacity.
	psiScale    = 1000
	psiCapacity = 100 * psiScale
	// procPressureMemory is the node's memory pressure file.
	procPressureMemory = "/proc/pressure/memory"
)

// After an eviction for a PSI threshold, the avg10 figures lag the relief:
// a 10-second exponential average decays from 50 % to 5 % in about 23 s.
// A pass that looked at them as they are would evict a second pod for the
// stall of before. So, after a PSI eviction, PSI thresholds drive no
// eviction for psiSettle, and then, until psiSettleMax, none while their
// signal is still falling (lower than at the previous pass): the relief is
// under way. A stall that stays, or comes back, evicts again.
const (
	psiSettle    = 10 * time.Second
	psiSettleMax = time.Minute
)

// psiRule is the rule of the PSI signals: a share of stalled time that
// meets a threshold above it, with no minimum reclaim, one pod per pass,
// and settling after an eviction.
var psiRule = &signalRule{
	family:   "a pressure stall signal",
	gated:    psiGated,
	operator: opGreaterThan,
	symbol:   ">",
	met:      func(t evictionapi.Threshold, ob observation, _ bool) bool { return psiAbove(t, ob) },
	parseValue: func(s string) (evictionapi.ThresholdValue, bool, error) {
		v, err := parsePSIThresholdValue(s)
		return v, err == nil, err
	},
	settling: psiSettling,
	values:   psiValues,
	nodeMessage: func(_ v1.ResourceName, t *evictionapi.Threshold, ob *observation) string {
		return psiEvictionMessage(t, ob)
	},
}

// psiGated says why the PSI signals cannot be used when EvictionPSI is off.
func psiGated() error {
	if !gateEnabled(evictionPSI) {
		return errors.New("needs the EvictionPSI feature gate")
	}
	return nil
}

// psiValues renders an observed stall share and a threshold's.
func psiValues(t evictionapi.Threshold, ob observation, _ v1.ResourceName) (string, string) {
	observed, threshold := formatPSI(ob.available), describeThresholdValue(t.Value)
	if t.Value.Quantity != nil {
		threshold = formatPSI(t.Value.Quantity.MilliValue())
	}
	return observed, threshold
}

// psiSettling reports whether a PSI threshold, observed as ob, is held
// back since after the last PSI eviction, last being the signal at the
// previous pass.
func psiSettling(since time.Duration, last *observation, ob observation) bool {
	switch {
	case since < psiSettle:
		return true
	case since >= psiSettleMax || last == nil:
		return false
	}
	return ob.available < last.available
}

// isPSISignal reports whether signal is a pressure stall signal.
func isPSISignal(signal evictionapi.Signal) bool {
	return signal == signalMemoryPSISome || signal == signalMemoryPSIFull
}

// parsePSIThresholdValue parses a stall share: a number of percent, with
// or without "%", above 0 and below 100.
func parsePSIThresholdValue(s string) (evictionapi.ThresholdValue, error) {
	num := strings.TrimSuffix(strings.TrimSpace(s), "%")
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return evictionapi.ThresholdValue{}, errors.New("want a share of stalled time in percent, such as 10 or 12.5%")
	}
	if f <= 0 || f >= 100 {
		return evictionapi.ThresholdValue{}, errors.New("a share of stalled time must be above 0 and below 100 percent")
	}
	q := resource.NewMilliQuantity(int64(math.Round(f*psiScale)), resource.DecimalSI)
	return evictionapi.ThresholdValue{Quantity: q}, nil
}

// psiAbove reports whether an observation is above a PSI threshold.
func psiAbove(t evictionapi.Threshold, ob observation) bool {
	if t.Value.Quantity == nil {
		return false
	}
	return ob.available > t.Value.Quantity.MilliValue()
}

// psiObservation is a stall share in percent as an observation.
func psiObservation(percent float64, at time.Time) observation {
	return observation{available: int64(math.Round(percent * psiScale)), capacity: psiCapacity, time: at}
}

// formatPSI renders an observed or threshold stall share ("12.5%").
func formatPSI(milli int64) string {
	return strconv.FormatFloat(float64(milli)/psiScale, 'f', -1, 64) + "%"
}

// observeSummaryPSI records the PSI signals from the Summary API's node
// memory stats; it reports whether they were there. Figures whose
// cumulative totals are both zero were not measured: on cgroup v1, where
// the root cgroup has no pressure files, cAdvisor fills in zeros (seen on
// kind nodes: a summary of 0 % while /proc/pressure/memory said 28 %); a
// kernel that measures stall has counted some since boot.
func observeSummaryPSI(out *observationSet, summary *statsapi.Summary) bool {
	if summary == nil || summary.Node.Memory == nil || summary.Node.Memory.PSI == nil {
		return false
	}
	m := summary.Node.Memory
	if m.PSI.Some.Total == 0 && m.PSI.Full.Total == 0 {
		return false
	}
	out.set(signalMemoryPSISome, psiObservation(m.PSI.Some.Avg10, m.Time.Time))
	out.set(signalMemoryPSIFull, psiObservation(m.PSI.Full.Avg10, m.Time.Time))
	return true
}

// observePressureFile records the PSI signals from the contents of a
// pressure file (/proc/pressure/memory) read at at.
func observePressureFile(out *observationSet, content []byte, at time.Time) error {
	some, full, err := parsePressureFile(content)
	if err != nil {
		return err
	}
	out.set(signalMemoryPSISome, psiObservation(some, at))
	out.set(signalMemoryPSIFull, psiObservation(full, at))
	return nil
}

// parsePressureFile returns the avg10 of the "some" and "full" lines of a
// pressure file:
//
//	some avg10=1.53 avg60=0.87 avg300=0.29 total=20390431
//	full avg10=0.00 avg60=0.13 avg300=0.05 total=5310237
//
// A file without a "full" line (the cpu file of older kernels) reads as
// full 0.
func parsePressureFile(content []byte) (some, full float64, err error) {
	seen := false
	for line := range bytes.Lines(content) {
		fields := strings.Fields(string(line))
		if len(fields) == 0 {
			continue
		}
		kind := fields[0]
		if kind != "some" && kind != "full" {
			return 0, 0, fmt.Errorf("pressure file: unexpected line %q", strings.TrimSpace(string(line)))
		}
		v, err := avg10(fields[1:])
		if err != nil {
			return 0, 0, fmt.Errorf("pressure file: %s line %q: %w", kind, strings.TrimSpace(string(line)), err)
		}
		if kind == "some" {
			some, seen = v, true
		} else {
			full = v
		}
	}
	if !seen {
		return 0, 0, errors.New(`pressure file: no "some" line`)
	}
	return some, full, nil
}

// avg10 returns the value of the avg10= field.
func avg10(fields []string) (float64, error) {
	for _, f := range fields {
		v, ok := strings.CutPrefix(f, "avg10=")
		if !ok {
			continue
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || x < 0 || x > 100 {
			return 0, fmt.Errorf("avg10=%q is not a percentage", v)
		}
		return x, nil
	}
	return 0, errors.New("no avg10 field")
}

// psiEvictionMessage is the node part of the message of a pod evicted
// for a PSI threshold.
func psiEvictionMessage(t *evictionapi.Threshold, ob *observation) string {
	if t == nil || ob == nil || t.Value.Quantity == nil {
		return "The node was under memory pressure. "
	}
	return fmt.Sprintf("The node was under memory pressure: %s was %s, threshold %s. ",
		t.Signal, formatPSI(ob.available), formatPSI(t.Value.Quantity.MilliValue()))
}

// hasPSIThreshold reports whether any threshold is on a PSI signal.
func hasPSIThreshold(thresholds []evictionapi.Threshold) bool {
	return slices.ContainsFunc(thresholds, func(t evictionapi.Threshold) bool { return isPSISignal(t.Signal) })
}

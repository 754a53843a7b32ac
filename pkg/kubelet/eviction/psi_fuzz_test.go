//evictkit:file EvictionPSI

package eviction

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// What EvictionPSI adds to the fuzz targets: the PSI signals (codes 9 and
// 10 of FuzzDecide, psi.some and psi.full of FuzzParseThresholdConfig),
// their thresholds and a pass's PSI figures; the paths of a PSI eviction
// and of PSI thresholds settling after one; the model's PSI signals; the
// parse seeds of PSI settings, with the gate as the options say.
var _ = addFzAlphaFeature(fzAlphaFeature{
	order:       2,
	signalCodes: map[int]evictionapi.Signal{9: signalMemoryPSISome, 10: signalMemoryPSIFull},
	threshold: func(sig evictionapi.Signal, pct float32, t *evictionapi.Threshold) bool {
		if !isPSISignal(sig) {
			return false
		}
		t.Operator = opGreaterThan
		t.Value.Quantity = resource.NewMilliQuantity(int64(fzPSIShares[int(pct*100)%len(fzPSIShares)]*1000), resource.DecimalSI)
		return true
	},
	observe: func(p fzPass, obs *observationSet) {
		if p.psi.observed {
			obs.set(signalMemoryPSISome, psiObservation(p.psi.some, p.psi.at))
			obs.set(signalMemoryPSIFull, psiObservation(p.psi.full, p.psi.at))
		}
	},
	targetPaths: func(t *reclaimTarget, paths map[string]bool) {
		if isPSISignal(t.threshold.Signal) {
			paths["psi-victim-"+strings.Split(string(t.threshold.Signal), ".")[2]] = true
		}
	},
	runPaths: func(ins []decideInput, outs []decision, paths map[string]bool) {
		// A PSI threshold acting after a PSI eviction that does not evict again.
		for pass := 1; pass < len(outs); pass++ {
			if outs[pass-1].next.settleFrom.IsZero() {
				continue
			}
			for i, th := range ins[pass].thresholds {
				if isPSISignal(th.Signal) && outs[pass].next.acting[i] && (outs[pass].target == nil || !isPSISignal(outs[pass].target.threshold.Signal)) {
					paths["psi-settling"] = true
				}
			}
		}
	},
	promises: []string{
		"psi-victim-some",
		"psi-victim-full",
		"psi-settling",
	},
	refSignals: map[evictionapi.Signal]refSignal{
		"memory.psi.some.avg10": {condition: v1.NodeMemoryPressure, class: refMemory, order: 2, psi: true},
		"memory.psi.full.avg10": {condition: v1.NodeMemoryPressure, class: refMemory, order: 3, psi: true},
	},
	signalNames: map[string]evictionapi.Signal{
		"psi.some": signalMemoryPSISome,
		"psi.full": signalMemoryPSIFull,
	},
	parseSeeds: []fzParseSeed{
		{"psi-gate-off", "hpsi.full=20", 0, "EvictionPSI", 0},
		{"psi-hard-and-soft", "hpsi.full=20;spsi.some=12.5%;gpsi.some=30s;hmem=100Mi", 1 | 4, "", 4},
		{"psi-out-of-range", "hpsi.some=100", 4, "evictionHard", 0},
		{"psi-no-reclaim", "hpsi.some=10;rpsi.some=1", 4, "evictionMinimumReclaim", 0},
	},
	parseGates: func(t *testing.T, o fzParseOptions) { setGateDuringTest(t, evictionPSI, o.psi) },
})

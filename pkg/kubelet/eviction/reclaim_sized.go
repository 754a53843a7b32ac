//evictkit:file EvictionReclaimSized

package eviction

import (
	"math"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2"

	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// evictionReclaimSized: evict, in one pass, as many pods in rank order as
// the shortfall takes, instead of one per pass.
const evictionReclaimSized featuregate.Feature = "EvictionReclaimSized"

var _ = addAlphaFeature(alphaFeature{gate: evictionReclaimSized, evicting: logSizing})

// Reclaim-sized eviction (feature gate EvictionReclaimSized, alpha).
//
// Upstream evicts at most one pod per pass for a threshold and then waits
// for it to be cleaned up, so pressure that takes k pods to relieve lasts
// at least k passes. With the gate on, a pass evicts, in rank order, as
// many pods as it takes for the threshold's signal to recover past the
// threshold plus its minimum reclaim, counting what each pod currently
// uses of the starved resource as what its eviction frees:
//
//   - the victims are a prefix of the ranking with critical pods left
//     out: no pod is evicted while one ranked ahead of it is spared;
//   - the prefix ends at the first pod that brings the expected relief to
//     the shortfall: never a pod more than the figures call for;
//   - when every evictable pod together cannot cover the shortfall (the
//     pressure is not the pods' doing, or their stats are missing), the
//     pass evicts only the first, as upstream does, and the next pass
//     looks again;
//   - pods without stats count as freeing nothing; they rank first, as
//     upstream ranks them, and are evicted with the pods after them.

// sizing records how a reclaim-sized selection was made, for logs.
type sizing struct {
	// shortfall is how much of the resource must be freed for the signal
	// to recover past threshold plus minimum reclaim.
	shortfall int64
	// expected is what the chosen victims use, and so should free.
	expected int64
	// covered is false when the evictable pods together could not cover
	// the shortfall and the selection fell back to one victim.
	covered bool
}

// shortfall returns how much of a signal must be freed for it to recover
// past the threshold plus its minimum reclaim; zero or less when it has.
// It is exact: a threshold near the int64 limit with a minimum reclaim on
// top goes past it.
func shortfall(t evictionapi.Threshold, ob observation) *resource.Quantity {
	s := thresholdLevel(t, ob.capacity, true)
	s.Sub(*resource.NewQuantity(ob.available, resource.BinarySI))
	return s
}

// sizeVictims returns the length of the shortest prefix of usage (what
// each evictable pod, in rank order, uses and would free) that covers the
// shortfall of ob against t, and how it decided. When no prefix covers it,
// the length is fallback (bounded by len(usage)). The sums are exact; the
// sizing keeps them clamped to int64 for the logs.
func sizeVictims(t evictionapi.Threshold, ob observation, usage []int64, fallback int) (int, sizing) {
	short := shortfall(t, ob)
	s := sizing{shortfall: clampedValue(short)}
	sum := resource.NewQuantity(0, resource.BinarySI)
	for i, u := range usage {
		sum.Add(*resource.NewQuantity(u, resource.BinarySI))
		if sum.Cmp(*short) >= 0 {
			s.expected, s.covered = clampedValue(sum), true
			return i + 1, s
		}
	}
	n := min(fallback, len(usage))
	sum = resource.NewQuantity(0, resource.BinarySI)
	for _, u := range usage[:n] {
		sum.Add(*resource.NewQuantity(u, resource.BinarySI))
	}
	s.expected = clampedValue(sum)
	return n, s
}

// clampedValue is q in whole units (rounded up), held at MaxInt64 where
// Quantity.Value would wrap. (A shortfall is never below -MaxInt64: the
// level is not negative and available is an int64.)
func clampedValue(q *resource.Quantity) int64 {
	if q.Cmp(*resource.NewQuantity(math.MaxInt64, resource.BinarySI)) > 0 {
		return math.MaxInt64
	}
	return q.Value()
}

// sizeTarget returns the target's victims among the evictable ranked pods
// (indices into target.ranked, in rank order) for the observation ob, and
// records how it sized them.
func sizeTarget(in *decideInput, target *reclaimTarget, evictable []int, ob observation) []victim {
	usage := make([]int64, len(evictable))
	for k, i := range evictable {
		usage[k] = target.ranked[i].usage
	}
	n, s := sizeVictims(target.threshold, ob, usage, 1)
	victims := make([]victim, 0, n)
	for _, i := range evictable[:n] {
		victims = append(victims, makeVictim(in, target, i))
	}
	target.sizing = &s
	return victims
}

// resize shrinks a reclaim-sized selection to what a newer observation
// (after node-level reclaim freed some of the resource) still calls for.
// It never adds victims: if the shortfall grew, the selection stays and
// the next pass looks again.
func (target *reclaimTarget) resize(ob observation) {
	if target.sizing == nil || !target.sizing.covered {
		return
	}
	usage := make([]int64, len(target.victims))
	for k := range target.victims {
		usage[k] = target.victims[k].usage
	}
	n, s := sizeVictims(target.threshold, ob, usage, len(usage))
	target.victims, target.sizing = target.victims[:n], &s
}

// logSizing logs how a reclaim-sized selection (EvictionReclaimSized) was
// made: the shortfall, what the victims are expected to free, and who they
// are. It logs nothing for upstream's one-victim selection.
func logSizing(logger klog.Logger, target *reclaimTarget) {
	s := target.sizing
	if s == nil {
		return
	}
	victims := make([]string, 0, len(target.victims))
	for i := range target.victims {
		victims = append(victims, klog.KObj(target.victims[i].pod).String())
	}
	logger.Info("Eviction manager: victims sized to the shortfall", "signal", target.threshold.Signal,
		"shortfall", s.shortfall, "expectedRelief", s.expected, "covered", s.covered, "victims", victims)
}

//evictkit:file decision

package eviction

import (
	"time"

	v1 "k8s.io/api/core/v1"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// hardEvictionGracePeriodSeconds is the grace period of pods evicted for a
// hard threshold or a local storage limit.
const hardEvictionGracePeriodSeconds = 1

// decideInput is everything one decision pass looks at.
type decideInput struct {
	// thresholds are the configured thresholds (containerfs ones derived).
	thresholds []evictionapi.Threshold
	// prev is the state the previous pass left.
	prev *decisionState
	// obs are this pass's signal observations.
	obs *observationSet
	// pods are the active pods and stats their Summary API figures.
	pods  []*v1.Pod
	stats podStatsIndex
	// layout is the node's filesystem layout.
	layout fsLayout
	// now is the time of this pass.
	now time.Time
	// transition is how long a condition outlives its last observation.
	transition time.Duration
	// maxPodGracePeriodSeconds caps the grace period of soft evictions.
	maxPodGracePeriodSeconds int64
	// localStorageIsolation enables emptyDir and ephemeral-storage limits.
	localStorageIsolation bool
	// gates are the feature gates the decision depends on.
	gates featureGates
	//evictkit:begin EvictionFastPath
	// cleanedUp are the pods of prev.inFlight (the same pointers) that
	// the kubelet has cleaned up since.
	cleanedUp map[*v1.Pod]bool
	//evictkit:end EvictionFastPath
	//evictkit:begin EvictionHardDuringSoft
	// softCleanedUp are the pods of prev.softInFlight (the same pointers)
	// that the kubelet has cleaned up since.
	softCleanedUp map[*v1.Pod]bool
	//evictkit:end EvictionHardDuringSoft
}

// featureGates are the kubelet feature gates the decision depends on.
type featureGates struct {
	// podLevelResources: PodLevelResources.
	podLevelResources bool
	// memoryBackedVolumes: InPlacePodVerticalScalingMemoryBackedVolumes.
	memoryBackedVolumes bool
	// alpha are the package's alpha gates that are on (feature_gates.go).
	alpha alphaGates
}

// decision is the outcome of one pass.
type decision struct {
	// next is the state to keep for the next pass.
	next decisionState
	// conditions are the node conditions to report.
	conditions []v1.NodeConditionType
	// storageVictims are pods over a local storage limit. When there are
	// any, they are evicted and the pass ends there.
	storageVictims []storageViolation
	// target is the threshold to relieve, or nil when none is actionable.
	target *reclaimTarget
	//evictkit:begin EvictionFastPath
	// heldFor are the pods evicted for heldCondition's signals, still
	// terminating, that held back this pass's target (then nil).
	heldFor       []*v1.Pod
	heldCondition v1.NodeConditionType
	//evictkit:end EvictionFastPath
	//evictkit:begin EvictionHardDuringSoft
	// heldForSoft are the soft victims still terminating that held back
	// this pass's soft thresholds.
	heldForSoft []*v1.Pod
	//evictkit:end EvictionHardDuringSoft
}

// reclaimTarget is the threshold a pass tries to relieve and how.
type reclaimTarget struct {
	// threshold is the threshold to relieve and resource what it starves.
	threshold evictionapi.Threshold
	resource  v1.ResourceName
	// steps is the node-level reclaim to try before evicting pods.
	steps []reclaimStep
	// actionable are all thresholds that could drive eviction this pass,
	// in reclaim order; their stats age is recorded when pods are evicted.
	actionable []evictionapi.Threshold
	// ranked are the active pods, first victim first.
	ranked []candidate
	// class is the ranking rule used.
	class rankClass
	// victims are the pods to evict if node-level reclaim is not enough.
	victims []victim
	//evictkit:begin EvictionReclaimSized
	// sizing says, with EvictionReclaimSized, how the victims were sized
	// to the shortfall; nil with the gate off.
	sizing *sizing
	//evictkit:end EvictionReclaimSized
	//evictkit:begin EvictionExplain
	// decision is what the victims' explanations share, with
	// EvictionExplain; nil with the gate off.
	decision *decisionContext
	//evictkit:end EvictionExplain
}

// victim is a pod chosen for eviction and everything needed to evict it.
type victim struct {
	pod *v1.Pod
	// rank is the pod's position in the ranking, from 0.
	rank int
	// gracePeriodSeconds overrides the pod's termination grace period.
	gracePeriodSeconds int64
	// message is the status message; annotations go on the Evicted event.
	message     string
	annotations map[string]string
	// reason says why the pod ranked where it did.
	reason string
	//evictkit:begin EvictionReclaimSized
	// usage is what the pod uses of the starved resource.
	usage int64
	//evictkit:end EvictionReclaimSized
	//evictkit:begin EvictionExplain
	// explanation says, with EvictionExplain, why this pod was chosen.
	explanation *explanation
	//evictkit:end EvictionExplain
}

// decide runs one pass of the decision core. It is a pure function of its
// input.
func decide(in *decideInput) decision {
	ev := evaluate(in.thresholds, in.prev, in.obs, in.transition, in.now)
	d := decision{next: ev.next, conditions: ev.conditions}
	//evictkit:begin EvictionFastPath
	for c := range conditionOrder {
		d.next.inFlight[c] = stillTerminating(in.prev.inFlight[c], in.cleanedUp, in.now)
	}
	//evictkit:end EvictionFastPath
	//evictkit:begin EvictionHardDuringSoft
	if in.gates.alpha[evictionHardDuringSoft] {
		d.next.softInFlight, d.next.softHoldUntil = softStillInFlight(in.prev, in.softCleanedUp, in.now)
	}
	//evictkit:end EvictionHardDuringSoft
	if in.localStorageIsolation {
		d.storageVictims = localStorageViolations(in.pods, in.stats, localStorageOptions{
			dedicatedImageFs:    in.layout.dedicatedImageFs,
			memoryVolumesExempt: in.gates.memoryBackedVolumes,
		})
		if len(d.storageVictims) > 0 {
			return d
		}
	}
	if len(ev.actionable) == 0 {
		return d
	}
	//evictkit:begin EvictionHardDuringSoft
	if len(d.next.softInFlight) > 0 {
		if ev.actionable = hardOnly(in.thresholds, ev.actionable); len(ev.actionable) == 0 {
			d.heldForSoft = d.next.softInFlight
			return d
		}
	}
	//evictkit:end EvictionHardDuringSoft
	d.target = planReclaim(in, ev.actionable)
	//evictkit:begin EvictionFastPath
	if c := signalConditionIndex(d.target.threshold.Signal); c >= 0 && len(d.next.inFlight[c].pods) > 0 {
		d.heldFor, d.heldCondition = d.next.inFlight[c].pods, conditionOrder[c]
		d.target = nil
	}
	//evictkit:end EvictionFastPath
	return d
}

// planReclaim builds the reclaim target for the first actionable threshold.
func planReclaim(in *decideInput, actionable []int) *reclaimTarget {
	t := in.thresholds[actionable[0]]
	target := &reclaimTarget{
		threshold: t,
		resource:  signalResource(t.Signal),
		steps:     nodeReclaimSteps(in.layout, t.Signal),
		class:     signalRankClass(t.Signal),
	}
	//evictkit:begin EvictionNodeFsReclaim
	if in.gates.alpha[evictionNodeFsReclaim] && len(target.steps) == 0 {
		target.steps = nodeFsReclaimSteps(in.layout, t.Signal)
	}
	//evictkit:end EvictionNodeFsReclaim
	for _, i := range actionable {
		target.actionable = append(target.actionable, in.thresholds[i])
	}
	target.ranked = rankPods(in.pods, in.stats, t.Signal, in.layout)
	// Critical pods are ranked but never evicted.
	var evictable []int
	for i := range target.ranked {
		if !target.ranked[i].critical {
			evictable = append(evictable, i)
		}
	}
	if len(evictable) == 0 {
		return target
	}
	target.victims = chooseVictims(in, target, evictable)
	//evictkit:begin EvictionExplain
	if in.gates.alpha[evictionExplain] {
		explainVictims(target, in.obs)
	}
	//evictkit:end EvictionExplain
	return target
}

// chooseVictims picks the victims among the evictable ranked pods
// (indices into target.ranked, in rank order, at least one).
func chooseVictims(in *decideInput, target *reclaimTarget, evictable []int) []victim {
	//evictkit:begin EvictionReclaimSized
	if in.gates.alpha[evictionReclaimSized] && ruleOf(target.threshold.Signal).sized {
		// An actionable threshold always has an observation.
		ob, _ := in.obs.get(target.threshold.Signal)
		return sizeTarget(in, target, evictable, ob)
	}
	//evictkit:end EvictionReclaimSized
	// One pod per pass, as upstream.
	return []victim{makeVictim(in, target, evictable[0])}
}

// makeVictim prepares the eviction of the i-th ranked pod.
func makeVictim(in *decideInput, target *reclaimTarget, i int) victim {
	c := &target.ranked[i]
	var ob *observation
	if o, ok := in.obs.get(target.threshold.Signal); ok {
		ob = &o
	}
	msg, ann := thresholdEvictionMessage(target.resource, &target.threshold, ob, c.pod, in.stats.lookup(c.pod), in.gates.podLevelResources)
	grace := evictionGracePeriod(target.threshold, c.pod, in.maxPodGracePeriodSeconds)
	//evictkit:begin EvictionKillWithoutGrace
	if isHardEvictionThreshold(target.threshold) {
		grace = hardEvictionGrace(in.gates)
	}
	//evictkit:end EvictionKillWithoutGrace
	//evictkit:begin EvictionNegativeMaxPodGraceDefers
	if !isHardEvictionThreshold(target.threshold) && deferToPodGrace(in.gates, in.maxPodGracePeriodSeconds) {
		grace = podOwnGracePeriod(c.pod)
	}
	//evictkit:end EvictionNegativeMaxPodGraceDefers
	return victim{
		pod:                c.pod,
		rank:               i,
		gracePeriodSeconds: grace,
		message:            msg,
		annotations:        ann,
		reason:             c.reason(target.class),
		//evictkit:begin EvictionReclaimSized
		usage: c.usage,
		//evictkit:end EvictionReclaimSized
	}
}

// evictionGracePeriod is 1 s for hard thresholds; for soft ones, the pod's
// own termination grace period capped at maxPodGrace (maxPodGrace when the
// pod has none).
func evictionGracePeriod(t evictionapi.Threshold, pod *v1.Pod, maxPodGrace int64) int64 {
	if isHardEvictionThreshold(t) {
		return hardEvictionGracePeriodSeconds
	}
	if p := pod.Spec.TerminationGracePeriodSeconds; p != nil && *p < maxPodGrace {
		return *p
	}
	return maxPodGrace
}

//evictkit:file wired

package eviction

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
	"k8s.io/kubernetes/pkg/kubelet/metrics"
	kubelettypes "k8s.io/kubernetes/pkg/kubelet/types"
)

// podEviction is one pod to evict and how.
type podEviction struct {
	pod *v1.Pod
	// signal labels the eviction in kubelet_evictions: the threshold's
	// signal, or the local storage limit that was exceeded.
	signal             string
	gracePeriodSeconds int64
	// message is the pod's status message and the Evicted event's;
	// annotations go on the event.
	message     string
	annotations map[string]string
	// disruption adds the DisruptionTarget condition to the status.
	disruption bool
	//evictkit:begin EvictionExplain
	// explanation, when set, ends the event's message (explain.go).
	explanation string
	//evictkit:end EvictionExplain
}

// evictPod records the Evicted event, kills the pod, marking its status
// Failed with reason Evicted (and DisruptionTarget when asked), and counts
// it in kubelet_evictions. It refuses critical pods (static, mirror,
// system-critical priority), which the node needs and which would not come
// back. It reports whether an eviction was attempted: a kill that fails
// still counts, as upstream counts it (a dry run attempts none).
func (m *managerImpl) evictPod(logger klog.Logger, e *podEviction) bool {
	pod := e.pod
	if kubelettypes.IsCriticalPod(pod) {
		logger.Error(nil, "Eviction manager: cannot evict a critical pod", "pod", klog.KObj(pod))
		return false
	}
	eventMessage := e.message
	//evictkit:begin EvictionExplain
	eventMessage = withExplanation(eventMessage, e.explanation)
	//evictkit:end EvictionExplain
	//evictkit:begin EvictionDryRun
	if m.alpha[evictionDryRun] {
		m.wouldEvict(logger, e, eventMessage)
		return false
	}
	//evictkit:end EvictionDryRun
	//evictkit:begin EvictionResumeAfterRestart
	var record *evictionRecord
	if m.alpha[evictionResumeAfterRestart] {
		if prev, ok := m.records.firstLook(logger, pod); ok {
			m.finishResumed(logger, resumeKill(pod, prev, m.clock.Now()))
			return true
		}
		r := m.recordStart(logger, e)
		record = &r
	}
	//evictkit:end EvictionResumeAfterRestart
	//nolint:forbidigo // the annotated event API is the one the kubelet records with.
	m.recorder.AnnotatedEventf(pod, e.annotations, v1.EventTypeWarning, Reason, "%s", eventMessage)
	logger.V(3).Info("Evicting pod", "pod", klog.KObj(pod), "podUID", pod.UID, "message", e.message)
	m.killEvicted(logger, pod, e.gracePeriodSeconds, e.message, e.disruption)
	//evictkit:begin EvictionResumeAfterRestart
	if record != nil {
		m.recordDone(logger, pod, *record)
	}
	//evictkit:end EvictionResumeAfterRestart
	metrics.Evictions.WithLabelValues(e.signal).Inc()
	return true
}

// killEvicted kills an evicted pod with a grace period, marking its status
// evicted, and logs how the kill ended.
func (m *managerImpl) killEvicted(logger klog.Logger, pod *v1.Pod, grace int64, message string, disruption bool) {
	err := m.killPodFunc(pod, true, &grace, func(status *v1.PodStatus) {
		markEvicted(status, pod, message, disruption)
	})
	if err != nil {
		logger.Error(err, "Eviction manager: pod failed to evict", "pod", klog.KObj(pod))
	} else {
		logger.Info("Eviction manager: pod is evicted successfully", "pod", klog.KObj(pod))
	}
}

// evictVictims evicts the target's victims and returns those it attempted,
// in rank order.
func (m *managerImpl) evictVictims(logger klog.Logger, target *reclaimTarget) []*v1.Pod {
	//evictkit:begin EvictionReclaimSized
	if len(target.victims) > 1 {
		return m.evictConcurrently(logger, target)
	}
	//evictkit:end EvictionReclaimSized
	var evicted []*v1.Pod
	for i := range target.victims {
		if m.evictVictim(logger, target, &target.victims[i]) {
			evicted = append(evicted, target.victims[i].pod)
		}
	}
	return evicted
}

// evictVictim evicts one victim of a threshold; it reports whether the
// eviction was attempted.
func (m *managerImpl) evictVictim(logger klog.Logger, target *reclaimTarget, v *victim) bool {
	e := &podEviction{pod: v.pod, signal: string(target.threshold.Signal), gracePeriodSeconds: v.gracePeriodSeconds,
		message: v.message, annotations: v.annotations, disruption: true}
	//evictkit:begin EvictionExplain
	if v.explanation != nil && target.decision != nil {
		e.explanation = v.explanation.clause(target.decision)
	}
	//evictkit:end EvictionExplain
	return m.evictPod(logger, e)
}

// markEvicted sets the status of an evicted pod.
func markEvicted(status *v1.PodStatus, pod *v1.Pod, message string, disruption bool) {
	status.Phase = v1.PodFailed
	status.Reason = Reason
	status.Message = message
	if !disruption {
		return
	}
	podutil.UpdatePodCondition(status, &v1.PodCondition{
		Type:               v1.DisruptionTarget,
		ObservedGeneration: podutil.CalculatePodConditionObservedGeneration(status, pod.Generation, v1.DisruptionTarget),
		Status:             v1.ConditionTrue,
		Reason:             v1.PodReasonTerminationByKubelet,
		Message:            message,
	})
}

// PodIsEvicted reports whether a pod status is that of an evicted pod.
func PodIsEvicted(podStatus v1.PodStatus) bool {
	return podStatus.Phase == v1.PodFailed && podStatus.Reason == Reason
}

//evictkit:file wired

package eviction

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/kubelet/metrics"
)

// synchronize runs one pass: observe, decide, act. It returns the pods it
// evicted, or nil.
func (m *managerImpl) synchronize(ctx context.Context, diskInfoProvider DiskInfoProvider, podFunc ActivePodsFunc) ([]*v1.Pod, error) {
	logger := klog.FromContext(ctx)
	m.syncMu.Lock()
	defer m.syncMu.Unlock()

	if len(m.config.Thresholds) == 0 && !m.localStorageCapacityIsolation {
		return nil, nil
	}
	logger.V(3).Info("Eviction manager: synchronize housekeeping")
	if m.layout == nil {
		if err := m.detectLayout(ctx, diskInfoProvider); err != nil {
			return nil, err
		}
	}

	pods := podFunc()
	summary, err := m.summaryProvider.Get(ctx, true)
	if err != nil {
		logger.Error(err, "Eviction manager: failed to get summary stats")
		return nil, nil
	}
	if summary == nil {
		logger.Error(nil, "Eviction manager: summary provider returned no stats")
		return nil, nil
	}
	m.rearmNotifiers(ctx, summary)

	obs := observeSummary(summary)
	m.alphaFeatures.observe(m, logger, obs, summary)
	stats := indexPodStats(summary)
	//evictkit:begin EvictionReclaimableMemory
	if m.alpha[evictionReclaimableMemory] {
		obs, stats = m.reclaimableMemory(logger, obs, stats, pods)
	}
	//evictkit:end EvictionReclaimableMemory
	logObservations(logger, "observations", obs)
	d := decide(m.decideInput(obs, pods, stats, m.clock.Now()))
	m.state = d.next
	m.setConditions(logger, d.conditions)
	if len(d.conditions) > 0 {
		logger.V(3).Info("Eviction manager: node conditions", "nodeConditions", d.conditions)
	}
	//evictkit:begin EvictionResumeAfterRestart
	if m.alpha[evictionResumeAfterRestart] && !m.alpha[evictionDryRun] {
		if resumed := m.resumeEvictions(logger, pods); len(resumed) > 0 {
			return resumed, nil
		}
	}
	//evictkit:end EvictionResumeAfterRestart
	if m.alphaFeatures.decided(m, logger, pods, stats, &d) {
		return nil, nil
	}

	if len(d.storageVictims) > 0 {
		return m.evictForLocalStorage(logger, d.storageVictims), nil
	}
	if d.target == nil {
		logger.V(3).Info("Eviction manager: no resources are starved")
		return nil, nil
	}
	return m.relieve(ctx, d.target, pods, obs, m.summaryAfterReclaim), nil
}

// decideInput is the decision core's input for this pass's observations,
// pods and stats at now, with the manager's configuration and state.
func (m *managerImpl) decideInput(obs *observationSet, pods []*v1.Pod, stats podStatsIndex, now time.Time) *decideInput {
	in := &decideInput{
		thresholds:               m.config.Thresholds,
		prev:                     &m.state,
		obs:                      obs,
		pods:                     pods,
		stats:                    stats,
		layout:                   *m.layout,
		now:                      now,
		transition:               m.config.PressureTransitionPeriod,
		maxPodGracePeriodSeconds: m.config.MaxPodGracePeriodSeconds,
		localStorageIsolation:    m.localStorageCapacityIsolation,
		gates:                    m.decisionGates(),
	}
	m.alphaFeatures.input(m, in)
	return in
}

// decisionGates are the feature gates the decision core depends on.
func (m *managerImpl) decisionGates() featureGates {
	return featureGates{
		podLevelResources:   utilfeature.DefaultFeatureGate.Enabled(features.PodLevelResources),
		memoryBackedVolumes: utilfeature.DefaultFeatureGate.Enabled(features.InPlacePodVerticalScalingMemoryBackedVolumes),
		alpha:               m.alpha,
	}
}

// setConditions publishes the node conditions to admission and the
// pressure queries.
func (m *managerImpl) setConditions(logger klog.Logger, conditions []v1.NodeConditionType) {
	conditions = m.alphaFeatures.publish(m, logger, conditions)
	m.mu.Lock()
	m.conditions = conditions
	m.mu.Unlock()
}

// detectLayout asks once how the node's filesystems are laid out and
// derives the containerfs thresholds from it.
func (m *managerImpl) detectLayout(ctx context.Context, diskInfoProvider DiskInfoProvider) error {
	logger := klog.FromContext(ctx)
	imageFs, err := diskInfoProvider.HasDedicatedImageFs(ctx)
	if err != nil {
		logger.Error(err, "Eviction manager: failed to get HasDedicatedImageFs")
		return fmt.Errorf("eviction manager: failed to get HasDedicatedImageFs: %w", err)
	}
	split, err := diskInfoProvider.HasDedicatedContainerFs(ctx)
	if err != nil {
		logger.Error(err, "Eviction manager: failed to check if we have separate container filesystem. Ignoring.")
	}
	m.layout = &fsLayout{dedicatedImageFs: imageFs, splitContainerFs: split}
	logger.V(3).Info("FileSystem detection", "DedicatedImageFs", imageFs, "SplitImageFs", split)
	if split && !utilfeature.DefaultFeatureGate.Enabled(features.KubeletSeparateDiskGC) {
		m.rankingUnavailable = true
		return fmt.Errorf("KubeletSeparateDiskGC is turned off but we still have a split filesystem")
	}
	thresholds, err := UpdateContainerFsThresholds(m.config.Thresholds, imageFs, split)
	if err != nil {
		logger.Error(err, "eviction manager: found conflicting containerfs eviction. Ignoring.")
	}
	m.config.Thresholds = thresholds
	m.state = newDecisionState(len(thresholds))
	return nil
}

// rearmNotifiers re-arms the memory notifiers from fresh stats, at most
// once per notifierRefreshInterval.
func (m *managerImpl) rearmNotifiers(ctx context.Context, summary *statsapi.Summary) {
	if m.clock.Since(m.notifiersArmedAt) <= notifierRefreshInterval {
		return
	}
	m.notifiersArmedAt = m.clock.Now()
	for _, n := range m.thresholdNotifiers {
		if err := n.UpdateThreshold(ctx, summary); err != nil {
			klog.FromContext(ctx).Info("Eviction manager: failed to update notifier", "notifier", n.Description(), "err", err)
		}
	}
}

// evictForLocalStorage evicts every pod over a local storage limit.
func (m *managerImpl) evictForLocalStorage(logger klog.Logger, violations []storageViolation) []*v1.Pod {
	var evicted []*v1.Pod
	for _, v := range violations {
		if m.evictPod(logger, &podEviction{pod: v.pod, signal: v.limit, gracePeriodSeconds: hardEvictionGracePeriodSeconds, message: v.message}) {
			evicted = append(evicted, v.pod)
		}
	}
	return evicted
}

// afterReclaim observes the node after node-level reclaim; ok is false
// when it cannot.
type afterReclaim func(ctx context.Context) (obs *observationSet, ok bool)

// relieve tries node-level reclaim for the target and, when that is not
// enough, evicts the chosen victims. observe is how the pass sees the node
// after reclaim (where its own figures came from: the monitoring pass
// reads the Summary API).
func (m *managerImpl) relieve(ctx context.Context, target *reclaimTarget, pods []*v1.Pod, obs *observationSet, observe afterReclaim) []*v1.Pod {
	logger := klog.FromContext(ctx)
	logger.Info("Eviction manager: attempting to reclaim", "resourceName", target.resource)
	m.recorder.Eventf(m.nodeRef, v1.EventTypeWarning, "EvictionThresholdMet", "Attempting to reclaim %s", target.resource)

	if !m.rankingUnavailable && len(target.steps) > 0 {
		if obs, ok := m.reclaimNodeLevel(ctx, target, observe); ok {
			var relieved bool
			if target, relieved = replan(target, m.config.Thresholds, obs); relieved {
				logger.Info("Eviction manager: able to reduce resource pressure without evicting pods.", "resourceName", target.resource)
				return nil
			}
		}
	}
	logger.Info("Eviction manager: must evict pod(s) to reclaim", "resourceName", target.resource)
	if m.rankingUnavailable {
		logger.Error(nil, "Eviction manager: no ranking function for signal", "threshold", target.threshold.Signal)
		return nil
	}
	if len(pods) == 0 {
		logger.Error(nil, "Eviction manager: eviction thresholds have been met, but no pods are active to evict")
		return nil
	}
	logRanking(logger, target)
	for _, t := range target.actionable {
		if ob, ok := obs.get(t.Signal); ok && !ob.time.IsZero() {
			metrics.EvictionStatsAge.WithLabelValues(string(t.Signal)).Observe(metrics.SinceInSeconds(ob.time))
		}
	}
	m.alphaFeatures.evicting(logger, target)
	//evictkit:begin EvictionHardDuringSoft
	if killsInBackground(m.alpha, target) {
		return m.evictInBackground(logger, target)
	}
	//evictkit:end EvictionHardDuringSoft
	evicted := m.evictVictims(logger, target)
	o := outcome{signal: target.threshold.Signal, evicted: evicted, at: m.clock.Now()}
	//evictkit:begin EvictionFastPath
	o.tracked = m.fastPathWatches(target.threshold.Signal)
	//evictkit:end EvictionFastPath
	m.state = m.state.advance(o)
	if len(evicted) == 0 {
		//evictkit:begin EvictionDryRun
		if m.alpha[evictionDryRun] {
			return nil
		}
		//evictkit:end EvictionDryRun
		logger.Info("Eviction manager: unable to evict any pods from the node")
		return nil
	}
	return evicted
}

// reclaimNodeLevel runs the target's node-level reclaim steps and returns
// what observe sees after them; ok is false when it cannot see.
func (m *managerImpl) reclaimNodeLevel(ctx context.Context, target *reclaimTarget, observe afterReclaim) (*observationSet, bool) {
	logger := klog.FromContext(ctx)
	for _, step := range target.steps {
		var err error
		switch step {
		case reclaimContainers:
			err = m.containerGC.DeleteAllUnusedContainers(ctx)
		case reclaimImages:
			err = m.imageGC.DeleteUnusedImages(ctx)
		}
		if err != nil {
			logger.Info("Eviction manager: unexpected error when attempting to reduce resource pressure", "resourceName", target.resource, "step", step.String(), "err", err)
		}
	}
	obs, ok := observe(ctx)
	if ok {
		logObservations(logger, "observations after resource reclaim", obs)
	}
	return obs, ok
}

// summaryAfterReclaim observes the node through the Summary API.
func (m *managerImpl) summaryAfterReclaim(ctx context.Context) (*observationSet, bool) {
	summary, err := m.summaryProvider.Get(ctx, true)
	if err != nil || summary == nil {
		klog.FromContext(ctx).Error(err, "Eviction manager: failed to get summary stats after resource reclaim")
		return nil, false
	}
	return observeSummary(summary), true
}

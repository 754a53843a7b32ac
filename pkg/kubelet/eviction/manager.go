//evictkit:file wired

package eviction

import (
	"context"
	"runtime"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
	"k8s.io/kubernetes/pkg/kubelet/server/stats"
)

// managerImpl is the I/O shell around the decision core: it gathers
// inputs, runs the core, and carries out what the core decided.
type managerImpl struct {
	// What the manager enforces: its configuration (thresholds become
	// layout-specific after the first pass) and whether local storage
	// limits (emptyDir sizeLimit, ephemeral-storage) are enforced.
	config                        Config
	localStorageCapacityIsolation bool
	// alpha are the alpha gates that are on, and alphaFeatures the rows of
	// their features (feature_gates.go).
	alpha         alphaGates
	alphaFeatures alphaFeatures
	//evictkit:begin EvictionDryRun
	// dryRunLedger remembers what the dry run has reported (dry_run.go).
	dryRunLedger dryRunLedger
	//evictkit:end EvictionDryRun
	//evictkit:begin EvictionPSI
	// readPressure reads /proc/pressure/memory (psi_observe.go).
	readPressure func() ([]byte, error)
	//evictkit:end EvictionPSI

	// Where inputs come from.
	summaryProvider stats.SummaryProvider
	clock           clock.WithTicker

	// How decisions are carried out and reported.
	killPodFunc KillPodFunc
	containerGC ContainerGC
	imageGC     ImageGC
	recorder    record.EventRecorder
	nodeRef     *v1.ObjectReference

	// mu guards conditions, which admission and the pressure queries read.
	mu         sync.RWMutex
	conditions []v1.NodeConditionType

	// syncMu serializes passes: the monitoring loop and memory notifiers
	// may both trigger one. Everything below is owned by the pass.
	syncMu sync.Mutex
	// layout is the filesystem layout, known after the first successful pass.
	layout *fsLayout
	// rankingUnavailable is set when the layout is not supported (a split
	// filesystem with KubeletSeparateDiskGC off): signals are still
	// observed and conditions reported, but nothing is reclaimed or
	// evicted for thresholds, as upstream behaves.
	rankingUnavailable bool
	// state is the decision core's state.
	state decisionState
	// thresholdNotifiers re-arm memory notifiers; notifiersArmedAt is when
	// they were last re-armed.
	thresholdNotifiers []ThresholdNotifier
	notifiersArmedAt   time.Time
	//evictkit:begin EvictionFastPath
	// fast is what the fast path is given once it starts (fastpath.go).
	fast fastPathInputs
	//evictkit:end EvictionFastPath
	//evictkit:begin EvictionSoftGraceTimer
	// graceChanged wakes the waiting monitoring loop after a pass, and
	// graceAnnounced is the grace expiry it last logged (soft_grace_timer.go).
	graceChanged   chan struct{}
	graceAnnounced time.Time
	//evictkit:end EvictionSoftGraceTimer
	//evictkit:begin EvictionReclaimableMemory
	// reclaim reads the memory cgroups for reclaimable memory
	// (reclaimable_memory.go).
	reclaim reclaimInputs
	//evictkit:end EvictionReclaimableMemory
	//evictkit:begin EvictionHardDuringSoft
	// podCleanedUp is the kubelet's PodCleanedUpFunc, from Start
	// (hard_during_soft.go).
	podCleanedUp PodCleanedUpFunc
	//evictkit:end EvictionHardDuringSoft
	//evictkit:begin EvictionResumeAfterRestart
	// records keeps evictions in progress in the pods' directories
	// (resume_after_restart.go).
	records evictionRecords
	//evictkit:end EvictionResumeAfterRestart
}

var _ Manager = &managerImpl{}
var _ lifecycle.PodAdmitHandler = &managerImpl{}

// NewManager returns an eviction manager and the admission handler that
// rejects pods while the node is under pressure.
func NewManager(summaryProvider stats.SummaryProvider, config Config, killPodFunc KillPodFunc, imageGC ImageGC, containerGC ContainerGC, recorder record.EventRecorder, nodeRef *v1.ObjectReference, clock clock.WithTicker, localStorageCapacityIsolation bool) (Manager, lifecycle.PodAdmitHandler) {
	m := &managerImpl{config: config, state: newDecisionState(len(config.Thresholds))}
	m.localStorageCapacityIsolation = localStorageCapacityIsolation
	m.alpha, m.alphaFeatures = readAlphaFeatures(config.Thresholds)
	// Inputs.
	m.summaryProvider, m.clock = summaryProvider, clock
	// Actions on the node and the API.
	m.killPodFunc, m.imageGC, m.containerGC = killPodFunc, imageGC, containerGC
	m.recorder, m.nodeRef = recorder, nodeRef
	m.alphaFeatures.init(m)
	return m, m
}

// Admit rejects pods that the node cannot safely start under its current
// pressure conditions.
func (m *managerImpl) Admit(ctx context.Context, attrs *lifecycle.PodAdmitAttributes) lifecycle.PodAdmitResult {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return admitUnderPressure(klog.FromContext(ctx), m.conditions, attrs.Pod,
		utilfeature.DefaultFeatureGate.Enabled(features.TaintTolerationComparisonOperators))
}

// IsUnderMemoryPressure reports whether the node has the MemoryPressure condition.
func (m *managerImpl) IsUnderMemoryPressure() bool { return m.hasCondition(v1.NodeMemoryPressure) }

// IsUnderDiskPressure reports whether the node has the DiskPressure condition.
func (m *managerImpl) IsUnderDiskPressure() bool { return m.hasCondition(v1.NodeDiskPressure) }

// IsUnderPIDPressure reports whether the node has the PIDPressure condition.
func (m *managerImpl) IsUnderPIDPressure() bool { return m.hasCondition(v1.NodePIDPressure) }

func (m *managerImpl) hasCondition(c v1.NodeConditionType) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return hasNodeCondition(m.conditions, c)
}

// Start arms memory notifiers (when configured) and runs the monitoring
// loop until ctx is done. After evicting, the loop waits for the evicted
// pods to be cleaned up and then runs again at once; otherwise it waits
// monitoringInterval.
func (m *managerImpl) Start(ctx context.Context, diskInfoProvider DiskInfoProvider, podFunc ActivePodsFunc, podCleanedUpFunc PodCleanedUpFunc, monitoringInterval time.Duration) {
	logger := klog.FromContext(ctx)
	logger.Info("Eviction manager: starting control loop")
	onNotification := func(message string) {
		logger.Info(message)
		_, _ = m.synchronize(ctx, diskInfoProvider, podFunc)
	}
	//evictkit:begin EvictionCgroupV2Notifier
	if m.alpha[evictionCgroupV2Notifier] {
		// Name the pods a notification's own pass evicted: the monitoring
		// loop logs its evictions, upstream's notification passes do not.
		onNotification = func(message string) {
			logger.Info(message)
			if evicted, _ := m.synchronize(ctx, diskInfoProvider, podFunc); len(evicted) > 0 {
				logger.Info("Eviction manager: pods evicted by the pass a notification woke", "pods", klog.KObjSlice(evicted))
			}
		}
	}
	//evictkit:end EvictionCgroupV2Notifier
	//evictkit:begin EvictionFastPath
	if m.alpha[evictionFastPath] && m.startFastPath(ctx, diskInfoProvider, podFunc, podCleanedUpFunc) {
		// A notification wakes the fast path instead of a full pass.
		onNotification = func(message string) {
			logger.Info(message)
			_ = m.fastPass(ctx, podFunc, "memcg notification")
		}
	}
	//evictkit:end EvictionFastPath
	//evictkit:begin EvictionDiskFastPath
	if m.alpha[evictionDiskFastPath] {
		m.startDiskFastPath(ctx, diskInfoProvider, podFunc, podCleanedUpFunc)
	}
	//evictkit:end EvictionDiskFastPath
	//evictkit:begin EvictionHardDuringSoft
	if m.alpha[evictionHardDuringSoft] {
		m.syncMu.Lock()
		m.podCleanedUp = podCleanedUpFunc
		m.syncMu.Unlock()
	}
	//evictkit:end EvictionHardDuringSoft
	//evictkit:begin EvictionResumeAfterRestart
	if m.alpha[evictionResumeAfterRestart] {
		m.records.use(logger, diskInfoProvider)
	}
	//evictkit:end EvictionResumeAfterRestart
	if m.config.KernelMemcgNotification || runtime.GOOS == "windows" {
		m.startMemoryNotifiers(ctx, onNotification)
	}
	go m.monitor(ctx, diskInfoProvider, podFunc, podCleanedUpFunc, monitoringInterval)
}

// startMemoryNotifiers creates one notifier per memory threshold.
func (m *managerImpl) startMemoryNotifiers(ctx context.Context, handler func(string)) {
	logger := klog.FromContext(ctx)
	var notifiers []ThresholdNotifier
	//evictkit:begin EvictionCgroupV2Notifier
	// One cgroup v2 notifier per watched cgroup (the node's, the pods'):
	// what wakes it does not depend on a threshold's level, so a hard and
	// a soft threshold on the same signal share it.
	v2Watching := map[bool]bool{}
	//evictkit:end EvictionCgroupV2Notifier
	for _, t := range m.config.Thresholds {
		if !isMemorySignal(t.Signal) {
			continue
		}
		//evictkit:begin EvictionCgroupV2Notifier
		if m.alpha[evictionCgroupV2Notifier] {
			pods := isAllocatableEvictionThreshold(t)
			if v2Watching[pods] {
				continue
			}
			if n, ok := newCgroupV2Notifier(t, m.config.PodCgroupRoot, handler); ok {
				v2Watching[pods] = true
				go n.Start(ctx)
				notifiers = append(notifiers, n)
				continue
			}
		}
		//evictkit:end EvictionCgroupV2Notifier
		n, err := NewMemoryThresholdNotifier(logger, t, m.config.PodCgroupRoot, &CgroupNotifierFactory{}, handler)
		if err != nil {
			logger.Info("Eviction manager: failed to create memory threshold notifier", "threshold", describeThreshold(t), "err", err)
			continue
		}
		go n.Start(ctx)
		notifiers = append(notifiers, n)
	}
	m.syncMu.Lock()
	m.thresholdNotifiers = append(m.thresholdNotifiers, notifiers...)
	m.syncMu.Unlock()
}

// monitor is the monitoring loop: a pass, then either the cleanup wait
// (after an eviction) or the monitoring interval, both on the manager's
// clock, until ctx is done.
func (m *managerImpl) monitor(ctx context.Context, diskInfoProvider DiskInfoProvider, podFunc ActivePodsFunc, podCleanedUpFunc PodCleanedUpFunc, interval time.Duration) {
	logger := klog.FromContext(ctx)
	defer func() { logger.Info("Eviction manager: monitoring loop exiting", "err", ctx.Err()) }()
	for ctx.Err() == nil {
		switch evicted, err := m.synchronize(ctx, diskInfoProvider, podFunc); {
		case err != nil:
			logger.Error(err, "Eviction manager: failed to synchronize")
		case evicted != nil:
			logger.Info("Eviction manager: pods evicted, waiting for pod to be cleaned up", "pods", klog.KObjSlice(evicted))
			m.waitForPodsCleanup(ctx, podCleanedUpFunc, evicted)
			continue
		}
		//evictkit:begin EvictionSoftGraceTimer
		if m.alpha[evictionSoftGraceTimer] {
			m.waitUntilNextPass(ctx, interval)
			continue
		}
		//evictkit:end EvictionSoftGraceTimer
		timer := m.clock.NewTimer(interval)
		select {
		case <-ctx.Done():
		case <-timer.C():
		}
		timer.Stop()
	}
}

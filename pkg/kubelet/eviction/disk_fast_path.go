//evictkit:file EvictionDiskFastPath

package eviction

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
	volumeutils "k8s.io/kubernetes/pkg/volume/util"
)

// evictionDiskFastPath: watch the node's filesystems with statfs at a
// sub-second interval and, once a hard disk threshold is met, decide at
// once on fresh figures of the filesystems and of the pods' volumes and
// logs.
const evictionDiskFastPath featuregate.Feature = "EvictionDiskFastPath"

var _ = addAlphaFeature(alphaFeature{
	gate: evictionDiskFastPath,
	// The core learns which of the pods evicted for disk are gone.
	input: func(m *managerImpl, in *decideInput) { in.cleanedUp = m.cleanupReport() },
	// A pass keeps its stats for the watcher (writable layers), and does
	// not act for disk while pods evicted for it are still terminating.
	decided: func(m *managerImpl, logger klog.Logger, _ []*v1.Pod, stats podStatsIndex, d *decision) bool {
		if m.fast.disk != nil {
			m.fast.lastStats = stats
		}
		return heldBack(logger, d, v1.NodeDiskPressure)
	},
})

// The disk fast path (EvictionDiskFastPath, alpha): a watcher reads the
// node's filesystems with statfs every diskFastPathInterval and, once a
// hard disk threshold is met there, measures what each active pod holds
// in its local volumes and logs, runs the core on these figures and acts
// at once, without asking the Summary API first (node-level reclaim, when
// the signal has it, comes first and reads the Summary API after, as
// upstream's pass does). No pass evicts for disk while earlier disk victims
// terminate (their volumes go only when they are cleaned up), and disk
// stats older than a disk fast pass's figures never drive an eviction.
// Writable layers keep the monitoring pass's figures: they live in the
// runtime's snapshots, which the kubelet does not walk.
const (
	// diskFastPathInterval is how often the watcher reads the
	// filesystems: one statfs call each (a few microseconds, see
	// BenchmarkDiskWatcherTick), the memory watcher's interval. A writer
	// at 200 MiB/s takes 10 MiB of headroom per interval.
	diskFastPathInterval = 50 * time.Millisecond
	// diskFastPathQuiet is the pause after a disk fast pass that evicted
	// nothing before the watcher tries again.
	diskFastPathQuiet = time.Second
)

// localStorageDirs is what the kubelet tells the disk fast path about
// where things are (the kubelet's DiskInfoProvider has it when the gate
// is on).
type localStorageDirs interface {
	// NodeFsDir is a directory on the kubelet's root filesystem.
	NodeFsDir() string
	// ImageFsDir is a directory on the runtime's image filesystem.
	ImageFsDir(ctx context.Context) (string, error)
	// GetPodDir is the pod's directory; its volumes are under it.
	GetPodDir(podUID types.UID) string
	// PodLogsDir is the directory of the pod's container logs, one
	// directory per container inside it.
	PodLogsDir(namespace, name string, podUID types.UID) string
}

// diskWatch is the disk fast path's reader.
type diskWatch struct {
	dirs      localStorageDirs
	nodeFsDir string
	// statfs and usage read a filesystem's figures and a tree's usage
	// (statfsFigures and treeUsage; tests put fakes in their place).
	statfs func(dir string) (fsFigures, error)
	usage  func(dir string) (diskUsage, error)
	// mu guards imageFsDir: "" until the layout is known to have a
	// dedicated image filesystem and the runtime has named a directory on
	// it; imageFsAsked is set once the runtime has been asked.
	mu           sync.Mutex
	imageFsDir   string
	imageFsAsked bool
}

// localVolumePluginDirs are the directories, under a pod's volumes
// directory, of the volumes the ranking counts as the pod's local storage
// (volumeutils.IsLocalEphemeralVolume: emptyDir on disk, configMap,
// gitRepo), which the kubelet keeps in the pod's directory. hostPath
// volumes are elsewhere and keep the Summary API's figures.
var localVolumePluginDirs = []struct {
	has func(v *v1.Volume) bool
	dir string
}{
	{func(v *v1.Volume) bool { return v.EmptyDir != nil }, "kubernetes.io~empty-dir"},
	{func(v *v1.Volume) bool { return v.ConfigMap != nil }, "kubernetes.io~configmap"},
	{func(v *v1.Volume) bool { return v.GitRepo != nil }, "kubernetes.io~git-repo"},
}

// startDiskFastPath starts the disk watcher, unless no hard disk threshold
// is configured or the kubelet gives no directories; it reports whether
// it did.
func (m *managerImpl) startDiskFastPath(ctx context.Context, diskInfo DiskInfoProvider, podFunc ActivePodsFunc, cleanedUp PodCleanedUpFunc) bool {
	logger := klog.FromContext(ctx)
	if !hasHardDiskThreshold(m.config.Thresholds) {
		logger.Info("Eviction manager: EvictionDiskFastPath is on but no hard disk threshold is configured; the disk fast path stays off")
		return false
	}
	dirs, ok := diskInfo.(localStorageDirs)
	if !ok {
		logger.Info("Eviction manager: EvictionDiskFastPath is on but the kubelet gives no filesystem directories; the disk fast path stays off")
		return false
	}
	w := m.fast.disk
	if w == nil {
		w = &diskWatch{statfs: statfsFigures, usage: treeUsage}
	}
	w.dirs, w.nodeFsDir = dirs, dirs.NodeFsDir()
	if _, err := w.statfs(w.nodeFsDir); err != nil {
		logger.Error(err, "Eviction manager: EvictionDiskFastPath is on but the kubelet's root filesystem cannot be read; the disk fast path stays off")
		return false
	}
	m.syncMu.Lock()
	m.fast.disk, m.fast.podCleanedUp, m.fast.diskInfo = w, cleanedUp, diskInfo
	m.fast.watching[conditionIndex(v1.NodeDiskPressure)] = true
	m.syncMu.Unlock()
	logger.Info("Eviction manager: disk fast path on", "nodeFsDir", w.nodeFsDir, "interval", diskFastPathInterval)
	go m.watchDisk(ctx, podFunc)
	return true
}

// hasHardDiskThreshold reports whether a hard threshold watches a disk
// signal.
func hasHardDiskThreshold(thresholds []evictionapi.Threshold) bool {
	return slices.ContainsFunc(thresholds, isHardDiskThreshold)
}

// watchDisk is the disk watcher's loop, until ctx is done.
func (m *managerImpl) watchDisk(ctx context.Context, podFunc ActivePodsFunc) {
	m.watchLoop(ctx, diskFastPathInterval, diskFastPathQuiet, m.diskCrossed, func(ctx context.Context) []*v1.Pod {
		return m.diskFastPass(ctx, podFunc)
	})
}

// diskCrossed reads the filesystems and reports whether their figures
// meet a hard disk threshold. Before the first monitoring pass (no
// layout yet) it waits.
func (m *managerImpl) diskCrossed(ctx context.Context) bool {
	m.syncMu.Lock()
	last, thresholds, layout, w := m.state.lastObservations, m.config.Thresholds, m.layout, m.fast.disk
	m.syncMu.Unlock()
	if w == nil || layout == nil {
		return false
	}
	fresh := w.readFs(ctx, *layout, m.clock.Now())
	obs, _ := withFreshDisk(last, nil, nil, fresh, *layout)
	return hardDiskThresholdMet(thresholds, obs)
}

// readFs reads the filesystems the layout has at at: nodefs, and the
// image filesystem when it is a dedicated one (the runtime is asked once
// where it is). A filesystem that cannot be read is left out, and its
// signals to the monitoring loop.
func (w *diskWatch) readFs(ctx context.Context, layout fsLayout, at time.Time) *freshDisk {
	logger := klog.FromContext(ctx)
	fresh := &freshDisk{at: at}
	if fs, err := w.statfs(w.nodeFsDir); err == nil {
		fresh.nodeFs = &fs
	} else {
		logger.V(4).Info("Eviction manager: disk fast path could not read nodefs", "err", err)
	}
	if !layout.dedicatedImageFs {
		return fresh
	}
	w.mu.Lock()
	if !w.imageFsAsked {
		w.imageFsAsked = true
		dir, err := w.dirs.ImageFsDir(ctx)
		if err != nil {
			logger.Error(err, "Eviction manager: disk fast path cannot find the image filesystem; its signals are left to the monitoring loop")
		}
		w.imageFsDir = dir
	}
	dir := w.imageFsDir
	w.mu.Unlock()
	if dir == "" {
		return fresh
	}
	if fs, err := w.statfs(dir); err == nil {
		fresh.imageFs = &fs
	} else {
		logger.V(4).Info("Eviction manager: disk fast path could not read the image filesystem", "dir", dir, "err", err)
	}
	return fresh
}

// measurePods measures the local volumes and container logs of each pod;
// a tree that cannot be measured is left out (it keeps the Summary API's
// figure).
func (w *diskWatch) measurePods(logger klog.Logger, pods []*v1.Pod) map[types.UID]podDiskUsage {
	out := make(map[types.UID]podDiskUsage, len(pods))
	measure := func(into map[string]diskUsage, name, dir string) {
		u, err := w.usage(dir)
		if err != nil {
			logger.V(4).Info("Eviction manager: disk fast path could not measure a pod's directory", "dir", dir, "err", err)
			return
		}
		into[name] = u
	}
	for _, pod := range pods {
		usage := podDiskUsage{volumes: map[string]diskUsage{}, logs: map[string]diskUsage{}}
		volumes := filepath.Join(w.dirs.GetPodDir(pod.UID), "volumes")
		for i := range pod.Spec.Volumes {
			vol := &pod.Spec.Volumes[i]
			if !volumeutils.IsLocalEphemeralVolume(*vol) {
				continue
			}
			for _, p := range localVolumePluginDirs {
				if p.has(vol) {
					measure(usage.volumes, vol.Name, filepath.Join(volumes, p.dir, vol.Name))
				}
			}
		}
		logs := w.dirs.PodLogsDir(pod.Namespace, pod.Name, pod.UID)
		podutil.VisitContainers(&pod.Spec, podutil.AllContainers, func(c *v1.Container, _ podutil.ContainerType) bool {
			measure(usage.logs, c.Name, filepath.Join(logs, c.Name))
			return true
		})
		out[pod.UID] = usage
	}
	return out
}

// diskFastPass decides on fresh disk figures and acts at once. It returns
// the pods it evicted.
func (m *managerImpl) diskFastPass(ctx context.Context, podFunc ActivePodsFunc) []*v1.Pod {
	logger := klog.FromContext(ctx)
	m.syncMu.Lock()
	defer m.syncMu.Unlock()
	w := m.fast.disk
	if w == nil || m.layout == nil || m.rankingUnavailable {
		return nil
	}
	disk := conditionIndex(v1.NodeDiskPressure)
	if held := stillTerminating(m.state.inFlight[disk], m.cleanupReport(), m.clock.Now()); len(held.pods) > 0 {
		return nil
	}
	pods := podFunc()
	fresh := w.readFs(ctx, *m.layout, m.clock.Now())
	if obs, _ := withFreshDisk(m.state.lastObservations, nil, nil, fresh, *m.layout); !hardDiskThresholdMet(m.config.Thresholds, obs) {
		return nil
	}
	start := time.Now()
	fresh.pod = w.measurePods(logger, pods)
	took := time.Since(start)
	obs, stats := withFreshDisk(m.state.lastObservations, m.fast.lastStats, pods, fresh, *m.layout)
	logObservations(logger, "disk fast path observations", obs)
	in := m.decideInput(obs, pods, stats, fresh.at)
	// Local storage limits are the monitoring loop's.
	in.localStorageIsolation = false
	d := decide(in)
	m.state = fastPassState(m.config.Thresholds, &m.state, d.next, v1.NodeDiskPressure, fresh.at)
	m.setConditions(logger, m.state.conditions(m.config.PressureTransitionPeriod, fresh.at))
	if d.target == nil || signalConditionIndex(d.target.threshold.Signal) != disk {
		return nil
	}
	ob, _ := obs.get(d.target.threshold.Signal)
	logger.Info("Eviction manager: disk fast path", "signal", d.target.threshold.Signal, "available", ob.available,
		"threshold", describeThreshold(d.target.threshold), "podsMeasured", len(fresh.pod), "measureTook", took)
	return m.relieve(ctx, d.target, pods, obs, func(ctx context.Context) (*observationSet, bool) {
		return m.statfsAfterReclaim(ctx, d.target.threshold.Signal, obs)
	})
}

// statfsAfterReclaim observes, after node-level reclaim for a disk fast
// pass's signal, the filesystems with statfs again (the pass's figures
// came from there; the Summary API's may be older, and reading it took
// 43 ms on a kind node). Other signals keep the pass's figures obs. Where
// the signal's filesystem cannot be read it falls back to the Summary API.
func (m *managerImpl) statfsAfterReclaim(ctx context.Context, signal evictionapi.Signal, obs *observationSet) (*observationSet, bool) {
	fresh := m.fast.disk.readFs(ctx, *m.layout, m.clock.Now())
	if fresh.figuresFor(signal, *m.layout) == nil {
		return m.summaryAfterReclaim(ctx)
	}
	after, _ := withFreshDisk(obs, nil, nil, fresh, *m.layout)
	return after, true
}

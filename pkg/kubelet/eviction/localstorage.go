//evictkit:file ranking

package eviction

import (
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
	kubelettypes "k8s.io/kubernetes/pkg/kubelet/types"
)

//evictkit:begin wired

// Metric labels for evictions caused by local storage limits.
const (
	signalEmptyDirFsLimit           = "emptydirfs.limit"
	signalEphemeralPodFsLimit       = "ephemeralpodfs.limit"
	signalEphemeralContainerFsLimit = "ephemeralcontainerfs.limit"
)

//evictkit:end wired

// storageViolation is a pod that went over one of its local storage limits.
type storageViolation struct {
	pod *v1.Pod
	// limit is the metric label naming the kind of limit.
	limit string
	// message is the eviction message.
	message string
}

// localStorageOptions are the inputs of local storage checks besides pods.
type localStorageOptions struct {
	// dedicatedImageFs: writable layers are not on nodefs, so only logs
	// count against a container's limit.
	dedicatedImageFs bool
	// memoryVolumesExempt: memory-backed emptyDirs are sized by the kernel
	// (feature InPlacePodVerticalScalingMemoryBackedVolumes).
	memoryVolumesExempt bool
}

// localStorageViolations returns, for every non-critical pod with stats,
// the first local storage limit it exceeds, checking in this order: its
// emptyDir size limits (in volume order), the pod's ephemeral-storage
// limit, then its containers' ephemeral-storage limits (in stats order).
// The violations come in their pods' namespace/name/UID order (upstream
// follows the order of the active pods list, so this is one of its
// possible orders), sorted once found: a pass sorts the few pods over a
// limit, not every pod.
func localStorageViolations(pods []*v1.Pod, stats podStatsIndex, opts localStorageOptions) []storageViolation {
	var out []storageViolation
	for _, pod := range pods {
		if pod == nil {
			continue
		}
		// Most pods name no limit: they are skipped before the stats look-up.
		emptyDirLimit, ephemeralLimit := namesEmptyDirLimit(pod, opts), mentionsEphemeralLimit(pod)
		if !emptyDirLimit && !ephemeralLimit {
			continue
		}
		s := stats.lookup(pod)
		if s == nil {
			continue
		}
		v, ok := firstStorageViolation(pod, s, opts, emptyDirLimit, ephemeralLimit)
		// Critical pods are exempt. Checked last: it reads annotations, and
		// only pods over a limit get this far.
		if ok && !kubelettypes.IsCriticalPod(pod) {
			out = append(out, v)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return tieBreakBefore(out[i].pod, out[j].pod) })
	return out
}

// firstStorageViolation checks the kinds of limit the pod names, in order.
func firstStorageViolation(pod *v1.Pod, s *statsapi.PodStats, opts localStorageOptions, emptyDirLimit, ephemeralLimit bool) (storageViolation, bool) {
	if emptyDirLimit {
		if v, ok := emptyDirViolation(pod, s, opts); ok {
			return v, true
		}
	}
	if !ephemeralLimit {
		return storageViolation{}, false
	}
	if v, ok := podLimitViolation(pod, s); ok {
		return v, true
	}
	return containerLimitViolation(pod, s, opts)
}

// namesEmptyDirLimit reports whether the pod has an emptyDir with a size
// limit that is enforced.
func namesEmptyDirLimit(pod *v1.Pod, opts localStorageOptions) bool {
	for i := range pod.Spec.Volumes {
		if enforcedSizeLimit(pod.Spec.Volumes[i].EmptyDir, opts) {
			return true
		}
	}
	return false
}

// enforcedSizeLimit reports whether an emptyDir (nil if the volume is not
// one) has a positive size limit that local storage eviction enforces.
func enforcedSizeLimit(ed *v1.EmptyDirVolumeSource, opts localStorageOptions) bool {
	return ed != nil && ed.SizeLimit != nil && ed.SizeLimit.Sign() > 0 &&
		!(opts.memoryVolumesExempt && ed.Medium == v1.StorageMediumMemory)
}

// emptyDirViolation finds the first emptyDir used beyond its size limit.
func emptyDirViolation(pod *v1.Pod, s *statsapi.PodStats, opts localStorageOptions) (storageViolation, bool) {
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		ed := vol.EmptyDir
		if !enforcedSizeLimit(ed, opts) {
			continue
		}
		vs := findVolumeStats(s, vol.Name)
		if vs == nil || vs.UsedBytes == nil {
			continue
		}
		if ed.SizeLimit.CmpInt64(u64(vs.UsedBytes)) < 0 {
			return storageViolation{
				pod:     pod,
				limit:   signalEmptyDirFsLimit,
				message: fmt.Sprintf("Usage of EmptyDir volume %q exceeds the limit %q. ", vol.Name, ed.SizeLimit.String()),
			}, true
		}
	}
	return storageViolation{}, false
}

// podLimitViolation checks the pod's total ephemeral storage against the
// sum of its limits. The caller has seen that the pod names one.
func podLimitViolation(pod *v1.Pod, s *statsapi.PodStats) (storageViolation, bool) {
	var used int64
	if s.EphemeralStorage != nil {
		used = u64(s.EphemeralStorage.UsedBytes)
	}
	if used <= regularContainersEphemeralLimit(pod) {
		return storageViolation{}, false
	}
	limit, ok := resourcehelper.PodLimits(pod, resourcehelper.PodResourcesOptions{})[v1.ResourceEphemeralStorage]
	if !ok || limit.CmpInt64(used) >= 0 {
		return storageViolation{}, false
	}
	return storageViolation{
		pod:     pod,
		limit:   signalEphemeralPodFsLimit,
		message: fmt.Sprintf("Pod ephemeral local storage usage exceeds the total limit of containers %s. ", limit.String()),
	}, true
}

// mentionsEphemeralLimit is a cheap pre-check: a pod can only have an
// ephemeral-storage limit if one of its containers or its pod-level
// resources names one.
func mentionsEphemeralLimit(pod *v1.Pod) bool {
	has := func(l v1.ResourceList) bool { _, ok := l[v1.ResourceEphemeralStorage]; return ok }
	for i := range pod.Spec.Containers {
		if has(pod.Spec.Containers[i].Resources.Limits) {
			return true
		}
	}
	for i := range pod.Spec.InitContainers {
		if has(pod.Spec.InitContainers[i].Resources.Limits) {
			return true
		}
	}
	return pod.Spec.Resources != nil && has(pod.Spec.Resources.Limits)
}

// regularContainersEphemeralLimit is the sum of the regular containers'
// ephemeral-storage limits in whole bytes, a lower bound of the pod's total
// limit (which adds sidecars, init containers and overhead, never less):
// usage up to it cannot exceed the total, so the aggregate, which costs
// maps per pod, is only worked out above it. A limit that is not a whole
// number of bytes makes the bound 0 (no shortcut).
func regularContainersEphemeralLimit(pod *v1.Pod) int64 {
	var sum int64
	for i := range pod.Spec.Containers {
		q, ok := pod.Spec.Containers[i].Resources.Limits[v1.ResourceEphemeralStorage]
		if !ok {
			continue
		}
		v, exact := q.AsInt64()
		if !exact || v < 0 {
			return 0
		}
		sum = satAdd(sum, v)
	}
	return sum
}

// containerLimitViolation finds the first container (regular or
// restartable init) whose logs, plus its writable layer when that lives on
// nodefs, exceed its ephemeral-storage limit.
func containerLimitViolation(pod *v1.Pod, s *statsapi.PodStats, opts localStorageOptions) (storageViolation, bool) {
	for i := range s.Containers {
		cs := &s.Containers[i]
		limit, ok := containerEphemeralLimit(pod, cs.Name)
		if !ok {
			continue
		}
		used, _ := fsUsage(cs.Logs)
		if !opts.dedicatedImageFs {
			root, _ := fsUsage(cs.Rootfs)
			used = satAdd(used, root)
		}
		if limit.CmpInt64(used) < 0 {
			return storageViolation{
				pod:     pod,
				limit:   signalEphemeralContainerFsLimit,
				message: fmt.Sprintf("Container %s exceeded its local ephemeral storage limit %q. ", cs.Name, limit.String()),
			}, true
		}
	}
	return storageViolation{}, false
}

// containerEphemeralLimit is the non-zero ephemeral-storage limit of the
// regular or restartable init container with this name. A linear search:
// pods have few containers, and a map per pod per pass costs more.
func containerEphemeralLimit(pod *v1.Pod, name string) (resource.Quantity, bool) {
	limitOf := func(c *v1.Container) (resource.Quantity, bool) {
		q, ok := c.Resources.Limits[v1.ResourceEphemeralStorage]
		return q, ok && !q.IsZero()
	}
	for i := range pod.Spec.Containers {
		if c := &pod.Spec.Containers[i]; c.Name == name {
			return limitOf(c)
		}
	}
	for i := range pod.Spec.InitContainers {
		if c := &pod.Spec.InitContainers[i]; c.Name == name && podutil.IsRestartableInitContainer(c) {
			return limitOf(c)
		}
	}
	return resource.Quantity{}, false
}

package eviction

import (
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// violation is a storageViolation reduced to comparable fields.
type violation struct{ pod, limit, message string }

func flatten(vs []storageViolation) []violation {
	var out []violation
	for _, v := range vs {
		out = append(out, violation{v.pod.Name, v.limit, v.message})
	}
	return out
}

func emptyDirOver(pod, vol, limit string) violation {
	return violation{pod, "emptydirfs.limit", `Usage of EmptyDir volume "` + vol + `" exceeds the limit "` + limit + `". `}
}

func podOver(pod, limit string) violation {
	return violation{pod, "ephemeralpodfs.limit", "Pod ephemeral local storage usage exceeds the total limit of containers " + limit + ". "}
}

func containerOver(pod, ctr, limit string) violation {
	return violation{pod, "ephemeralcontainerfs.limit", "Container " + ctr + ` exceeded its local ephemeral storage limit "` + limit + `". `}
}

// withNilVolumeBytes adds a volume stats entry without used bytes.
func withNilVolumeBytes(name string) podStatsOpt {
	return func(s *statsapi.PodStats) {
		s.VolumeStats = append(s.VolumeStats, statsapi.VolumeStats{Name: name})
	}
}

func TestLocalStorageViolations(t *testing.T) {
	cache := func(limit string, medium v1.StorageMedium) podOpt {
		return withVolumes(emptyDirVol("cache", limit, medium))
	}
	// A pod total of 1536Mi, of which the regular container has 1Gi.
	sidecarAndOverhead := func(p *v1.Pod) {
		withContainers(container("app", nil, rl("ephemeral-storage", "1Gi")))(p)
		withInitContainers(sidecar("proxy", nil, rl("ephemeral-storage", "256Mi")))(p)
		p.Spec.Overhead = rl("ephemeral-storage", "256Mi")
	}
	cases := []struct {
		name  string
		pods  []*v1.Pod
		stats []statsapi.PodStats
		opts  localStorageOptions
		want  []violation
	}{
		{
			name:  "emptyDir over its size limit",
			pods:  []*v1.Pod{pod("a", cache("100Mi", ""))},
			stats: []statsapi.PodStats{podStats("a", withVolumeStats("cache", 100*mi+1, 1))},
			want:  []violation{emptyDirOver("a", "cache", "100Mi")},
		},
		{
			name:  "emptyDir at its size limit",
			pods:  []*v1.Pod{pod("a", cache("100Mi", ""))},
			stats: []statsapi.PodStats{podStats("a", withVolumeStats("cache", 100*mi, 1))},
		},
		{
			name:  "emptyDir under its size limit",
			pods:  []*v1.Pod{pod("a", cache("100Mi", ""))},
			stats: []statsapi.PodStats{podStats("a", withVolumeStats("cache", mi, 1))},
		},
		{
			name:  "emptyDir without size limit",
			pods:  []*v1.Pod{pod("a", cache("", ""))},
			stats: []statsapi.PodStats{podStats("a", withVolumeStats("cache", 1<<40, 1))},
		},
		{
			name:  "zero size limit is ignored",
			pods:  []*v1.Pod{pod("a", cache("0", ""))},
			stats: []statsapi.PodStats{podStats("a", withVolumeStats("cache", 1, 1))},
		},
		{
			name:  "memory emptyDir is checked without the exemption",
			pods:  []*v1.Pod{pod("a", cache("64Mi", v1.StorageMediumMemory))},
			stats: []statsapi.PodStats{podStats("a", withVolumeStats("cache", 65*mi, 1))},
			want:  []violation{emptyDirOver("a", "cache", "64Mi")},
		},
		{
			name:  "memory emptyDir is exempt with the exemption",
			pods:  []*v1.Pod{pod("a", cache("64Mi", v1.StorageMediumMemory))},
			stats: []statsapi.PodStats{podStats("a", withVolumeStats("cache", 65*mi, 1))},
			opts:  localStorageOptions{memoryVolumesExempt: true},
		},
		{
			name:  "disk emptyDir is not exempt with the exemption",
			pods:  []*v1.Pod{pod("a", cache("64Mi", v1.StorageMediumDefault))},
			stats: []statsapi.PodStats{podStats("a", withVolumeStats("cache", 65*mi, 1))},
			opts:  localStorageOptions{memoryVolumesExempt: true},
			want:  []violation{emptyDirOver("a", "cache", "64Mi")},
		},
		{
			name:  "emptyDir without volume stats",
			pods:  []*v1.Pod{pod("a", cache("1Mi", ""))},
			stats: []statsapi.PodStats{podStats("a", withVolumeStats("other", 1<<30, 1))},
		},
		{
			name:  "volume stats without used bytes do not panic",
			pods:  []*v1.Pod{pod("a", cache("1Mi", ""))},
			stats: []statsapi.PodStats{podStats("a", withNilVolumeBytes("cache"), withNilVolumeBytes("other"))},
		},
		{
			name: "first emptyDir over its limit in volume order",
			pods: []*v1.Pod{pod("a", withVolumes(
				emptyDirVol("first", "1Mi", ""), emptyDirVol("second", "1Mi", ""),
			))},
			stats: []statsapi.PodStats{podStats("a", withVolumeStats("second", 2*mi, 1), withVolumeStats("first", 2*mi, 1))},
			want:  []violation{emptyDirOver("a", "first", "1Mi")},
		},
		{
			name: "pod limit is the sum of its containers' limits",
			pods: []*v1.Pod{pod("a", withContainers(
				container("one", nil, rl("ephemeral-storage", "1Gi")),
				container("two", nil, rl("ephemeral-storage", "512Mi")),
			))},
			stats: []statsapi.PodStats{podStats("a", withEphemeralUsed("1536Mi"), func(s *statsapi.PodStats) { *s.EphemeralStorage.UsedBytes++ })},
			want:  []violation{podOver("a", "1536Mi")},
		},
		{
			name: "pod at its limit",
			pods: []*v1.Pod{pod("a", withContainers(
				container("one", nil, rl("ephemeral-storage", "1Gi")),
				container("two", nil, rl("ephemeral-storage", "512Mi")),
			))},
			stats: []statsapi.PodStats{podStats("a", withEphemeralUsed("1536Mi"))},
		},
		{
			// Usage above the regular containers' sum is not yet over
			// the total, which counts the sidecar and the overhead.
			name:  "pod total counts sidecars and overhead beyond the regular containers",
			pods:  []*v1.Pod{pod("a", sidecarAndOverhead)},
			stats: []statsapi.PodStats{podStats("a", withEphemeralUsed("1536Mi"))},
		},
		{
			name:  "pod over a total that counts sidecars and overhead",
			pods:  []*v1.Pod{pod("a", sidecarAndOverhead)},
			stats: []statsapi.PodStats{podStats("a", withEphemeralUsed("1536Mi"), func(s *statsapi.PodStats) { *s.EphemeralStorage.UsedBytes++ })},
			want:  []violation{podOver("a", "1536Mi")},
		},
		{
			// 2 bytes used against 1.5: a limit rounded up to whole bytes
			// would hide it.
			name:  "pod over a limit that is not a whole number of bytes",
			pods:  []*v1.Pod{pod("a", withStorageLimit("1500m"))},
			stats: []statsapi.PodStats{podStats("a", withEphemeralUsed("2"))},
			want:  []violation{podOver("a", "1500m")},
		},
		{
			name:  "pod without ephemeral storage stats uses nothing",
			pods:  []*v1.Pod{pod("a", withStorageLimit("1Ki"))},
			stats: []statsapi.PodStats{podStats("a")},
		},
		{
			name:  "pod without any ephemeral-storage limit",
			pods:  []*v1.Pod{pod("a", withStorageRequest("1Ki"))},
			stats: []statsapi.PodStats{podStats("a", withEphemeralUsed("1Gi"), withContainerStats(cStats("app", cRootfs(1<<30, 1), cLogs(1<<30, 1))))},
		},
		{
			// Upstream keeps a zero limit in the pod total and enforces it.
			name:  "zero container limit still gives a zero pod total",
			pods:  []*v1.Pod{pod("a", withStorageLimit("0"))},
			stats: []statsapi.PodStats{podStats("a", withEphemeralUsed("1"), withContainerStats(cStats("app", cRootfs(1, 1))))},
			want:  []violation{podOver("a", "0")},
		},
		{
			name:  "zero container limit is not a container limit",
			pods:  []*v1.Pod{pod("a", withStorageLimit("0"))},
			stats: []statsapi.PodStats{podStats("a", withContainerStats(cStats("app", cRootfs(1, 1))))},
		},
		{
			name:  "container limit counts writable layer and logs on a single filesystem",
			pods:  []*v1.Pod{pod("a", withStorageLimit("100Mi"))},
			stats: []statsapi.PodStats{podStats("a", withContainerStats(cStats("app", cRootfs(60*mi, 1), cLogs(50*mi, 1))))},
			want:  []violation{containerOver("a", "app", "100Mi")},
		},
		{
			name:  "container at its limit",
			pods:  []*v1.Pod{pod("a", withStorageLimit("100Mi"))},
			stats: []statsapi.PodStats{podStats("a", withContainerStats(cStats("app", cRootfs(50*mi, 1), cLogs(50*mi, 1))))},
		},
		{
			name:  "container limit counts only logs with a dedicated imagefs",
			pods:  []*v1.Pod{pod("a", withStorageLimit("100Mi"))},
			stats: []statsapi.PodStats{podStats("a", withContainerStats(cStats("app", cRootfs(60*mi, 1), cLogs(50*mi, 1))))},
			opts:  localStorageOptions{dedicatedImageFs: true},
		},
		{
			name:  "logs alone over the container limit with a dedicated imagefs",
			pods:  []*v1.Pod{pod("a", withStorageLimit("100Mi"))},
			stats: []statsapi.PodStats{podStats("a", withContainerStats(cStats("app", cLogs(101*mi, 1))))},
			opts:  localStorageOptions{dedicatedImageFs: true},
			want:  []violation{containerOver("a", "app", "100Mi")},
		},
		{
			name:  "container stats without filesystem figures use nothing",
			pods:  []*v1.Pod{pod("a", withStorageLimit("1"))},
			stats: []statsapi.PodStats{podStats("a", withContainerStats(cStats("app")))},
		},
		{
			name:  "restartable init container limits count",
			pods:  []*v1.Pod{pod("a", withInitContainers(sidecar("proxy", nil, rl("ephemeral-storage", "10Mi"))))},
			stats: []statsapi.PodStats{podStats("a", withContainerStats(cStats("app", cLogs(1, 1)), cStats("proxy", cLogs(20*mi, 1))))},
			want:  []violation{containerOver("a", "proxy", "10Mi")},
		},
		{
			name:  "non-restartable init container limits do not count",
			pods:  []*v1.Pod{pod("a", withInitContainers(container("setup", nil, rl("ephemeral-storage", "10Mi"))))},
			stats: []statsapi.PodStats{podStats("a", withContainerStats(cStats("setup", cLogs(20*mi, 1))))},
		},
		{
			name: "first container over its limit in stats order",
			pods: []*v1.Pod{pod("a", withContainers(
				container("one", nil, rl("ephemeral-storage", "1Mi")),
				container("two", nil, rl("ephemeral-storage", "2Mi")),
			))},
			stats: []statsapi.PodStats{podStats("a", withContainerStats(cStats("two", cLogs(3*mi, 1)), cStats("one", cLogs(3*mi, 1))))},
			want:  []violation{containerOver("a", "two", "2Mi")},
		},
		{
			name:  "critical pods are never victims",
			pods:  []*v1.Pod{pod("static", staticPod(), cache("1Mi", "")), pod("system", withPriority(systemCritical), cache("1Mi", ""))},
			stats: []statsapi.PodStats{podStats("static", withVolumeStats("cache", 2*mi, 1)), podStats("system", withVolumeStats("cache", 2*mi, 1))},
		},
		{
			name: "pods without stats are skipped",
			pods: []*v1.Pod{pod("a", cache("1Mi", "")), nil},
		},
		{
			name: "only the first violation of a pod is reported",
			pods: []*v1.Pod{
				pod("dir", cache("1Mi", ""), withStorageLimit("1Mi")),
				pod("total", withStorageLimit("1Mi")),
			},
			stats: []statsapi.PodStats{
				podStats("dir", withVolumeStats("cache", 2*mi, 1), withEphemeralUsed("5Mi"), withContainerStats(cStats("app", cLogs(5*mi, 1)))),
				podStats("total", withEphemeralUsed("5Mi"), withContainerStats(cStats("app", cLogs(5*mi, 1)))),
			},
			want: []violation{emptyDirOver("dir", "cache", "1Mi"), podOver("total", "1Mi")},
		},
		{
			name: "several pods over their limits are all victims, in pod order",
			pods: []*v1.Pod{
				pod("c", withStorageLimit("1Mi")),
				pod("ok", withStorageLimit("1Gi")),
				pod("a", cache("1Mi", "")),
			},
			stats: []statsapi.PodStats{
				podStats("a", withVolumeStats("cache", 2*mi, 1)),
				podStats("ok", withContainerStats(cStats("app", cLogs(mi, 1)))),
				podStats("c", withContainerStats(cStats("app", cLogs(2*mi, 1)))),
			},
			want: []violation{containerOver("c", "app", "1Mi"), emptyDirOver("a", "cache", "1Mi")},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := flatten(localStorageViolations(tc.pods, statsIndex(tc.stats...), tc.opts))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("violations:\n got  %q\n want %q", got, tc.want)
			}
		})
	}
}

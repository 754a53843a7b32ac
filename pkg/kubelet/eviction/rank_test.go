package eviction

import (
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

var (
	singleFs    = fsLayout{}
	dedicatedFs = fsLayout{dedicatedImageFs: true}
	splitFs     = fsLayout{dedicatedImageFs: true, splitContainerFs: true}
	splitOnlyFs = fsLayout{splitContainerFs: true}
)

func rankedNames(cs []candidate) []string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.pod.Name)
	}
	return out
}

type rankCase struct {
	name   string
	pods   []*v1.Pod
	stats  []statsapi.PodStats
	layout fsLayout
	want   []string
}

func runRankCases(t *testing.T, signal evictionapi.Signal, cases []rankCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := rankedNames(rankPods(tc.pods, statsIndex(tc.stats...), signal, tc.layout))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ranked %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRankPodsMemory(t *testing.T) {
	runRankCases(t, sigMem, []rankCase{
		{
			name:  "pods without stats rank first",
			pods:  []*v1.Pod{pod("a", withMemRequest("100Mi")), pod("b")},
			stats: []statsapi.PodStats{podStats("a", withWorkingSet("500Mi"))},
			want:  []string{"b", "a"},
		},
		{
			name:  "pods without stats rank among themselves by priority",
			pods:  []*v1.Pod{pod("a", withPriority(10)), pod("b", withPriority(5)), pod("c", withPriority(-5))},
			stats: []statsapi.PodStats{podStats("c", withWorkingSet("5Gi"))},
			want:  []string{"b", "a", "c"},
		},
		{
			name: "usage above request ranks before usage within request whatever the priority",
			pods: []*v1.Pod{
				pod("within", withPriority(-100), withMemRequest("1Gi")),
				pod("above", withPriority(1000), withMemRequest("100Mi")),
			},
			stats: []statsapi.PodStats{podStats("within", withWorkingSet("900Mi")), podStats("above", withWorkingSet("101Mi"))},
			want:  []string{"above", "within"},
		},
		{
			name:  "usage equal to request is within request",
			pods:  []*v1.Pod{pod("equal", withPriority(-1), withMemRequest("100Mi")), pod("above", withMemRequest("100Mi"))},
			stats: []statsapi.PodStats{podStats("equal", withWorkingSet("100Mi")), podStats("above", withWorkingSet("101Mi"))},
			want:  []string{"above", "equal"},
		},
		{
			name: "lower priority first among pods above request",
			pods: []*v1.Pod{pod("hi", withPriority(100)), pod("lo", withPriority(10))},
			stats: []statsapi.PodStats{
				podStats("hi", withWorkingSet("4Gi")), podStats("lo", withWorkingSet("1Mi")),
			},
			want: []string{"lo", "hi"},
		},
		{
			name: "lower priority first among pods within request",
			pods: []*v1.Pod{pod("hi", withPriority(5), withMemRequest("1Gi")), pod("lo", withPriority(-5), withMemRequest("1Gi"))},
			stats: []statsapi.PodStats{
				podStats("hi", withWorkingSet("1000Mi")), podStats("lo", withWorkingSet("1Mi")),
			},
			want: []string{"lo", "hi"},
		},
		{
			name: "larger usage above request first at equal priority",
			pods: []*v1.Pod{
				pod("small", withMemRequest("100Mi")),
				pod("big", withMemRequest("1Gi")),
				pod("mid", withMemRequest("100Mi")),
			},
			stats: []statsapi.PodStats{
				podStats("small", withWorkingSet("150Mi")), // 50Mi above
				podStats("big", withWorkingSet("1424Mi")),  // 400Mi above
				podStats("mid", withWorkingSet("300Mi")),   // 200Mi above
			},
			want: []string{"big", "mid", "small"},
		},
		{
			name: "within request the smallest headroom goes first",
			pods: []*v1.Pod{pod("roomy", withMemRequest("1Gi")), pod("tight", withMemRequest("1Gi"))},
			stats: []statsapi.PodStats{
				podStats("roomy", withWorkingSet("100Mi")), podStats("tight", withWorkingSet("900Mi")),
			},
			want: []string{"tight", "roomy"},
		},
		{
			name:  "stats without memory count as no usage",
			pods:  []*v1.Pod{pod("nomem"), pod("some")},
			stats: []statsapi.PodStats{podStats("nomem"), podStats("some", withWorkingSet("1Ki"))},
			want:  []string{"some", "nomem"},
		},
		{
			name: "request counts init containers as the scheduler does",
			pods: []*v1.Pod{
				pod("initbig", withMemRequest("100Mi"), withInitContainers(container("setup", rl("memory", "1Gi"), nil))),
				pod("plain", withPriority(1), withMemRequest("100Mi")),
			},
			stats: []statsapi.PodStats{podStats("initbig", withWorkingSet("500Mi")), podStats("plain", withWorkingSet("101Mi"))},
			want:  []string{"plain", "initbig"},
		},
		{
			name:  "nil pods are skipped",
			pods:  []*v1.Pod{nil, pod("a"), nil},
			stats: []statsapi.PodStats{podStats("a")},
			want:  []string{"a"},
		},
		{
			name: "allocatable memory ranks like memory",
			pods: []*v1.Pod{pod("a", withPriority(1)), pod("b")},
			stats: []statsapi.PodStats{
				podStats("a", withWorkingSet("1Gi")), podStats("b", withWorkingSet("1Mi")),
			},
			want: []string{"b", "a"},
		},
	})
}

func TestRankPodsPIDs(t *testing.T) {
	runRankCases(t, sigPID, []rankCase{
		{
			name:  "lower priority first whatever the process count",
			pods:  []*v1.Pod{pod("busy", withPriority(10)), pod("idle", withPriority(-1))},
			stats: []statsapi.PodStats{podStats("busy", withProcesses(1000)), podStats("idle", withProcesses(1))},
			want:  []string{"idle", "busy"},
		},
		{
			name: "at equal priority pods without stats first, then most processes",
			pods: []*v1.Pod{
				pod("many", withPriority(0)), pod("nostats", withPriority(0)),
				pod("nostats-hi", withPriority(10)), pod("few", withPriority(0)),
			},
			stats: []statsapi.PodStats{podStats("many", withProcesses(1000)), podStats("few", withProcesses(5)), podStats("nostats-hi-other")},
			want:  []string{"nostats", "many", "few", "nostats-hi"},
		},
		{
			name: "memory above request does not matter",
			pods: []*v1.Pod{pod("greedy", withMemRequest("1Mi")), pod("forky", withMemRequest("1Gi"))},
			stats: []statsapi.PodStats{
				podStats("greedy", withWorkingSet("5Gi"), withProcesses(2)),
				podStats("forky", withWorkingSet("1Mi"), withProcesses(200)),
			},
			want: []string{"forky", "greedy"},
		},
		{
			name:  "stats without process figures count as zero processes",
			pods:  []*v1.Pod{pod("unknown"), pod("one")},
			stats: []statsapi.PodStats{podStats("unknown"), podStats("one", withProcesses(1))},
			want:  []string{"one", "unknown"},
		},
	})
}

func TestRankPodsDisk(t *testing.T) {
	runRankCases(t, sigNodeFs, []rankCase{
		{
			name:  "pods without stats rank first",
			pods:  []*v1.Pod{pod("a", withPriority(-10)), pod("b", withPriority(10))},
			stats: []statsapi.PodStats{podStats("a", withContainerStats(cStats("app", cRootfs(1<<20, 1))))},
			want:  []string{"b", "a"},
		},
		{
			name: "usage above ephemeral-storage request ranks first whatever the priority",
			pods: []*v1.Pod{
				pod("within", withPriority(-10), withStorageRequest("1Gi")),
				pod("above", withPriority(10), withStorageRequest("1Mi")),
			},
			stats: []statsapi.PodStats{
				podStats("within", withContainerStats(cStats("app", cRootfs(500<<20, 1)))),
				podStats("above", withContainerStats(cStats("app", cLogs(2<<20, 1)))),
			},
			want: []string{"above", "within"},
		},
		{
			name: "lower priority first, then larger usage above request",
			pods: []*v1.Pod{pod("hi", withPriority(5)), pod("lo-small", withPriority(1)), pod("lo-big", withPriority(1), withVolumes(emptyDirVol("scratch", "", v1.StorageMediumDefault)))},
			stats: []statsapi.PodStats{
				podStats("hi", withContainerStats(cStats("app", cRootfs(9<<30, 1)))),
				podStats("lo-small", withContainerStats(cStats("app", cRootfs(1<<20, 1)))),
				podStats("lo-big", withVolumeStats("scratch", 3<<30, 1)),
			},
			want: []string{"lo-big", "lo-small", "hi"},
		},
	})
}

func TestRankPodsInodesSubtractEphemeralStorageRequest(t *testing.T) {
	// Upstream ranks inode pressure by inodes above the pod's
	// ephemeral-storage request (in bytes), not above an inode request.
	runRankCases(t, sigNodeIn, []rankCase{
		{
			name: "storage request pushes an inode-heavy pod down",
			pods: []*v1.Pod{pod("heavy", withStorageRequest("1Ki")), pod("light")},
			stats: []statsapi.PodStats{
				podStats("heavy", withContainerStats(cStats("app", cRootfs(0, 1000)))),
				podStats("light", withContainerStats(cStats("app", cRootfs(0, 50)))),
			},
			want: []string{"light", "heavy"},
		},
		{
			name: "without requests the pod with more inodes goes first",
			pods: []*v1.Pod{pod("heavy"), pod("light")},
			stats: []statsapi.PodStats{
				podStats("heavy", withContainerStats(cStats("app", cRootfs(0, 1000)))),
				podStats("light", withContainerStats(cStats("app", cRootfs(0, 50)))),
			},
			want: []string{"heavy", "light"},
		},
		{
			name: "any inode use is above the (absent) inode request",
			pods: []*v1.Pod{pod("none", withPriority(-1)), pod("one", withPriority(1))},
			stats: []statsapi.PodStats{
				podStats("none", withContainerStats(cStats("app", cRootfs(1<<30, 0)))),
				podStats("one", withContainerStats(cStats("app", cRootfs(0, 1)))),
			},
			want: []string{"one", "none"},
		},
	})
	c := rankPods([]*v1.Pod{pod("heavy", withStorageRequest("1Ki"))},
		statsIndex(podStats("heavy", withContainerStats(cStats("app", cRootfs(0, 1000))))), sigNodeIn, singleFs)[0]
	if c.usage != 1000 || c.request != 0 || !c.exceeds || c.excess != 1000-1024 {
		t.Errorf("inode figures usage=%d request=%d exceeds=%v excess=%d, want 1000, 0, true, -24", c.usage, c.request, c.exceeds, c.excess)
	}
}

func TestRankPodsTieBreakIgnoresInputOrder(t *testing.T) {
	mk := func() []*v1.Pod {
		return []*v1.Pod{
			pod("z", inNamespace("a")),
			pod("a", inNamespace("b")),
			pod("y", inNamespace("a"), withUID("2")),
			pod("y", inNamespace("a"), withUID("1")),
		}
	}
	want := []string{"a/y/1", "a/y/2", "a/z/z-uid", "b/a/a-uid"}
	identical := func(withStats bool) podStatsIndex {
		if !withStats {
			return podStatsIndex{}
		}
		var ps []statsapi.PodStats
		for _, p := range mk() {
			ps = append(ps, podStats(p.Name, statsUID(string(p.UID)), withWorkingSet("1Gi"), withProcesses(7),
				withContainerStats(cStats("app", cRootfs(1<<20, 10)))))
		}
		return statsIndex(ps...)
	}
	for _, signal := range []evictionapi.Signal{sigMem, sigPID, sigNodeFs, sigImgIn} {
		for _, withStats := range []bool{false, true} {
			stats := identical(withStats)
			permute(mk(), func(order []*v1.Pod) {
				var got []string
				for _, c := range rankPods(order, stats, signal, singleFs) {
					got = append(got, c.pod.Namespace+"/"+c.pod.Name+"/"+string(c.pod.UID))
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s stats=%v input %v: ranked %v, want %v", signal, withStats, namesOf(order), got, want)
				}
			})
		}
	}
}

// permute calls fn with every ordering of pods.
func permute(pods []*v1.Pod, fn func([]*v1.Pod)) {
	var rec func(k int)
	rec = func(k int) {
		if k == len(pods) {
			fn(append([]*v1.Pod(nil), pods...))
			return
		}
		for i := k; i < len(pods); i++ {
			pods[k], pods[i] = pods[i], pods[k]
			rec(k + 1)
			pods[k], pods[i] = pods[i], pods[k]
		}
	}
	rec(0)
}

func TestRankPodsDiskUsagePerLayout(t *testing.T) {
	// Each part of the pod's storage uses a distinct power of ten, so the
	// sum shows which parts count. Inodes are twice the bytes.
	p := pod("d", withVolumes(
		emptyDirVol("scratch", "", v1.StorageMediumDefault),
		emptyDirVol("ram", "", v1.StorageMediumMemory),
		hostPathVol("host"),
		configMapVol("cfg"),
		secretVol("sec"),
		gitRepoVol("git"),
	))
	s := podStats("d",
		withContainerStats(
			cStats("app", cRootfs(1, 2), cLogs(10, 20)),
			cStats("side", cRootfs(100, 200), cLogs(1000, 2000)),
		),
		withVolumeStats("scratch", 1e4, 2e4),
		withVolumeStats("ram", 1e5, 2e5),
		withVolumeStats("host", 1e6, 2e6),
		withVolumeStats("cfg", 1e7, 2e7),
		withVolumeStats("sec", 1e8, 2e8),
		withVolumeStats("git", 1e9, 2e9),
		withVolumeStats("unlisted", 1e10, 2e10),
	)
	const (
		rootfs  = 101
		logs    = 1010
		volumes = 1e4 + 1e6 + 1e7 + 1e9 // emptyDir on disk, hostPath, configMap, gitRepo
		all     = rootfs + logs + volumes
	)
	cases := []struct {
		layout fsLayout
		signal evictionapi.Signal
		want   int64
	}{
		{singleFs, sigNodeFs, all}, {singleFs, sigImgFs, all}, {singleFs, sigCtrFs, all},
		{splitOnlyFs, sigNodeFs, all}, {splitOnlyFs, sigImgFs, all}, {splitOnlyFs, sigCtrFs, all},
		{dedicatedFs, sigNodeFs, logs + volumes}, {dedicatedFs, sigImgFs, rootfs}, {dedicatedFs, sigCtrFs, rootfs},
		{splitFs, sigNodeFs, all}, {splitFs, sigImgFs, 0}, {splitFs, sigCtrFs, all},
	}
	inodeSignal := map[evictionapi.Signal]evictionapi.Signal{sigNodeFs: sigNodeIn, sigImgFs: sigImgIn, sigCtrFs: sigCtrIn}
	for _, tc := range cases {
		bytesGot := rankPods([]*v1.Pod{p}, statsIndex(s), tc.signal, tc.layout)[0].usage
		if bytesGot != tc.want {
			t.Errorf("%+v %s: usage %d bytes, want %d", tc.layout, tc.signal, bytesGot, tc.want)
		}
		in := inodeSignal[tc.signal]
		inodesGot := rankPods([]*v1.Pod{p}, statsIndex(s), in, tc.layout)[0].usage
		if inodesGot != 2*tc.want {
			t.Errorf("%+v %s: usage %d inodes, want %d", tc.layout, in, inodesGot, 2*tc.want)
		}
	}
}

func TestRankPodsMarksCriticalPods(t *testing.T) {
	pods := []*v1.Pod{
		pod("plain", withPriority(0)),
		pod("static", staticPod()),
		pod("mirror", func(p *v1.Pod) { p.Annotations = map[string]string{v1.MirrorPodAnnotationKey: "x"} }),
		pod("system", withPriority(systemCritical)),
		pod("just-below", withPriority(systemCritical-1)),
	}
	want := map[string]bool{"plain": false, "static": true, "mirror": true, "system": true, "just-below": false}
	ranked := rankPods(pods, podStatsIndex{}, sigMem, singleFs)
	if len(ranked) != len(pods) {
		t.Fatalf("critical pods must still be ranked: got %v", rankedNames(ranked))
	}
	for _, c := range ranked {
		if c.critical != want[c.pod.Name] {
			t.Errorf("%s: critical=%v, want %v", c.pod.Name, c.critical, want[c.pod.Name])
		}
	}
}

func TestRankPodsMemoryFigures(t *testing.T) {
	ranked := rankPods([]*v1.Pod{pod("a", withPriority(7), withMemRequest("100Mi"))},
		statsIndex(podStats("a", withWorkingSet("150Mi"))), sigMem, singleFs)
	c := ranked[0]
	if !c.hasStats || c.priority != 7 || c.usage != 150<<20 || c.request != 100<<20 || !c.exceeds || c.excess != 50<<20 {
		t.Errorf("candidate %+v, want stats, priority 7, usage 150Mi, request 100Mi, exceeding by 50Mi", c)
	}
}

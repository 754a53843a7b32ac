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

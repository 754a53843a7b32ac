//evictkit:file ranking

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

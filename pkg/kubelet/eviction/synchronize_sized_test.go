//evictkit:file EvictionReclaimSized

package eviction

import (
	"reflect"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// mgrSizedPods are three BestEffort hogs of 300Mi and a Guaranteed pod
// within its request.
func mgrSizedPods() ([]*v1.Pod, []statsapi.PodStats) {
	guaranteed := pod("guaranteed", withRequest(v1.ResourceMemory, "2Gi"), withRequest(v1.ResourceCPU, "1"), withLimit(v1.ResourceMemory, "2Gi"), withLimit(v1.ResourceCPU, "1"))
	pods := []*v1.Pod{guaranteed, pod("hog-a"), pod("hog-b"), pod("hog-c")}
	st := []statsapi.PodStats{fakePodStats(guaranteed, fakePodUsage{memWS: []int64{gi}, ephem: -1})}
	for _, p := range pods[1:] {
		st = append(st, fakePodStats(p, fakePodUsage{memWS: []int64{300 * mi}, ephem: -1}))
	}
	return pods, st
}

// mgrSizedNode has 424Mi memory available: 600Mi short of memory.available<1Gi.
func mgrSizedNode() fakeNode {
	n := fakeHealthyNode()
	n.memAvail, n.memWS = 424*mi, 8*gi-424*mi
	return n
}

func TestMgrReclaimSizedEvictsWhatTheShortfallTakes(t *testing.T) {
	for _, on := range []bool{false, true} {
		t.Run(map[bool]string{false: "gate off", true: "gate on"}[on], func(t *testing.T) {
			setGateDuringTest(t, evictionReclaimSized, on)
			pods, st := mgrSizedPods()
			h := mgrNewHarness(t, mgrMemoryConfig(), false, mgrSizedNode().summary(mgrEpoch, st...))
			h.pods = pods

			want := []string{"hog-a"}
			if on {
				want = []string{"hog-a", "hog-b"}
			}
			// With the gate on, each kill waits until every victim's kill
			// has started: the kills must run concurrently to finish.
			var started sync.WaitGroup
			started.Add(len(want))
			allStarted := make(chan struct{})
			go func() { started.Wait(); close(allStarted) }()
			kill := h.m.killPodFunc
			h.m.killPodFunc = func(pod *v1.Pod, isEvicted bool, grace *int64, fn func(*v1.PodStatus)) error {
				started.Done()
				select {
				case <-allStarted:
				case <-time.After(30 * time.Second):
					t.Errorf("kill of %s: the other victims' kills did not start", pod.Name)
				}
				return kill(pod, isEvicted, grace, fn)
			}

			before := mgrEvictionCount(t, string(evictionapi.SignalMemoryAvailable))
			evicted, logged := h.syncLogging()
			if got := podNames(evicted); !reflect.DeepEqual(got, want) {
				t.Fatalf("evicted %v, want %v (in rank order)", got, want)
			}
			if got := slices.Contains(logged, "Eviction manager: victims sized to the shortfall"); got != on {
				t.Errorf("the pass logged the sizing: %v, want %v", got, on)
			}
			killed := h.killedNames()
			sort.Strings(killed)
			if !reflect.DeepEqual(killed, want) {
				t.Errorf("killed %v, want %v", killed, want)
			}
			for _, k := range h.killer.get() {
				if !PodIsEvicted(k.status) || mgrFindCondition(k.status, v1.DisruptionTarget) == nil || *k.grace != 1 {
					t.Errorf("%s: status %+v grace %d, want Evicted with DisruptionTarget and grace 1", k.pod.Name, k.status, *k.grace)
				}
			}
			var events []string
			for _, e := range h.recorder.byReason(Reason) {
				p, _ := e.object.(*v1.Pod)
				events = append(events, p.Name)
				if e.annotations[StarvedResourceKey] != "memory" {
					t.Errorf("%s: annotations %v, want the starved resource", p.Name, e.annotations)
				}
			}
			sort.Strings(events)
			if !reflect.DeepEqual(events, want) {
				t.Errorf("Evicted events for %v, want one each for %v", events, want)
			}
			if n := len(h.recorder.byReason("EvictionThresholdMet")); n != 1 {
				t.Errorf("EvictionThresholdMet events %d, want 1", n)
			}
			if d := mgrEvictionCount(t, string(evictionapi.SignalMemoryAvailable)) - before; d != float64(len(want)) {
				t.Errorf("kubelet_evictions{memory.available} delta %v, want %d", d, len(want))
			}
		})
	}
}

// After container GC frees part of the shortfall, fewer pods are evicted
// than the stats before it called for.
func TestMgrReclaimSizedAfterNodeReclaim(t *testing.T) {
	setGateDuringTest(t, evictionReclaimSized, true)
	cfg := mgrDiskConfig()
	cfg.Thresholds = []evictionapi.Threshold{hard(evictionapi.SignalNodeFsAvailable, "1Gi")}
	writerA, writerB, idle := pod("writer-a"), pod("writer-b"), pod("idle")
	st := []statsapi.PodStats{
		fakePodStats(writerA, fakePodUsage{rootfs: []int64{400 * mi}, ephem: -1}),
		fakePodStats(writerB, fakePodUsage{rootfs: []int64{400 * mi}, ephem: -1}),
		fakePodStats(idle, fakePodUsage{rootfs: []int64{mi}, ephem: -1}),
	}
	for _, tc := range []struct {
		name    string
		freedTo int64 // nodefs available after container GC; < 0: nothing freed
		want    []string
	}{
		{name: "nothing freed: two writers for 624Mi", freedTo: -1, want: []string{"writer-a", "writer-b"}},
		{name: "300Mi freed: one writer for 324Mi", freedTo: 700 * mi, want: []string{"writer-a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := fakeHealthyNode()
			n.nodeFsAvail = 400 * mi // 624Mi short of 1Gi
			h := mgrNewHarness(t, cfg, false, n.summary(mgrEpoch, st...))
			h.pods = []*v1.Pod{idle, writerB, writerA}
			if tc.freedTo >= 0 {
				h.contGC.effect = func() {
					h.summary.edit(func(s *statsapi.Summary) { s.Node.Fs.AvailableBytes = u64p(uint64(tc.freedTo)) })
				}
			}
			if got := podNames(h.sync()); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("evicted %v, want %v", got, tc.want)
			}
		})
	}
}

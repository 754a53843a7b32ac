//evictkit:file EvictionFastPath

package eviction

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// fastHarness is a manager with EvictionFastPath on, a hard
// memory.available<1Gi threshold, and a fake memory cgroup tree whose
// figures the test sets.
type fastHarness struct {
	*mgrHarness
	mount string
	mu    sync.Mutex
	clean map[types.UID]bool
}

func newFastHarness(t *testing.T, pods []*v1.Pod, st []statsapi.PodStats) *fastHarness {
	t.Helper()
	setGateDuringTest(t, evictionFastPath, true)
	cfg := mgrMemoryConfig()
	cfg.PodCgroupRoot = "kubepods"
	// The Summary API: 3Gi of 8Gi available, no pressure.
	n := fakeHealthyNode()
	n.memAvail, n.memWS = 3*gi, 5*gi
	h := &fastHarness{mgrHarness: mgrNewHarness(t, cfg, false, n.summary(mgrEpoch, st...)), mount: t.TempDir(), clean: map[types.UID]bool{}}
	h.pods = pods
	h.m.fast.memcg = &memcgReader{mount: h.mount, podRoot: "kubepods"}
	h.m.fast.watching[conditionIndex(v1.NodeMemoryPressure)] = true
	h.m.fast.podCleanedUp = func(p *v1.Pod) bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.clean[p.UID]
	}
	return h
}

// cgroups sets the node's working set and each pod's, in the fake tree.
func (h *fastHarness) cgroups(node int64, pods map[*v1.Pod]int64) {
	h.t.Helper()
	writeCgroup(h.t, h.mount, "", v1Memcg(node, 0))
	var sum int64
	for p, ws := range pods {
		writeCgroup(h.t, h.mount, "kubepods/besteffort/pod"+string(p.UID), v1Memcg(ws, 0))
		sum += ws
	}
	writeCgroup(h.t, h.mount, "kubepods", v1Memcg(sum, 0))
}

func (h *fastHarness) cleanedUp(p *v1.Pod) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.clean[p.UID] = true
}

const (
	fastUIDHog  = "0b9f8a52-6b7e-4d1c-9a57-1f2e3d4c5b6a"
	fastUIDIdle = "1c0a9b63-7c8f-4e2d-8b68-2a3f4e5d6c7b"
)

// fastPods: by the Summary API's stale figures idle uses more than hog;
// by the cgroups, hog has grown to 2.5Gi.
func fastPods() (hog, idle *v1.Pod, pods []*v1.Pod, st []statsapi.PodStats) {
	hog = pod("hog")
	hog.UID = fastUIDHog
	idle = pod("idle")
	idle.UID = fastUIDIdle
	st = []statsapi.PodStats{
		fakePodStats(hog, fakePodUsage{memWS: []int64{100 * mi}, ephem: -1}),
		fakePodStats(idle, fakePodUsage{memWS: []int64{500 * mi}, ephem: -1}),
	}
	return hog, idle, []*v1.Pod{idle, hog}, st
}

func TestFastPassDecidesOnFreshFigures(t *testing.T) {
	hog, idle, pods, st := fastPods()
	h := newFastHarness(t, pods, st)
	h.cgroups(5*gi, map[*v1.Pod]int64{hog: 100 * mi, idle: 500 * mi})
	ctx := context.Background()

	if got := h.m.fastPass(ctx, h.activePods, "test"); got != nil {
		t.Fatalf("a fast pass before any monitoring pass evicted %v", podNames(got))
	}
	if ev := h.sync(); ev != nil {
		t.Fatalf("monitoring pass without pressure evicted %v", podNames(ev))
	}
	if h.m.memoryCrossed(ctx) {
		t.Fatal("memoryCrossed with 3Gi available")
	}

	// The hog grows by 2.4Gi: 600Mi available by the cgroups, while the
	// Summary API still says 3Gi.
	h.clock.Step(3 * time.Second)
	h.cgroups(7*gi+424*mi, map[*v1.Pod]int64{hog: 2*gi + 512*mi, idle: 500 * mi})
	if !h.m.memoryCrossed(ctx) {
		t.Fatal("memoryCrossed = false with 600Mi available by the cgroups")
	}
	before := mgrEvictionCount(t, string(evictionapi.SignalMemoryAvailable))
	evicted := h.m.fastPass(ctx, h.activePods, "test")
	if got := podNames(evicted); !reflect.DeepEqual(got, []string{"hog"}) {
		t.Fatalf("fast pass evicted %v, want [hog] (the largest by fresh figures)", got)
	}
	if h.summary.calls() != 1 {
		t.Errorf("the fast pass read the Summary API (%d calls in all, want the monitoring pass's one)", h.summary.calls())
	}
	k := h.killer.get()[0]
	if !PodIsEvicted(k.status) || mgrFindCondition(k.status, v1.DisruptionTarget) == nil || *k.grace != 1 {
		t.Errorf("kill status %+v grace %d, want Evicted, DisruptionTarget, grace 1", k.status, *k.grace)
	}
	if !strings.Contains(k.status.Message, "available: 600Mi") {
		t.Errorf("message %q, want the fresh available figure", k.status.Message)
	}
	if d := mgrEvictionCount(t, string(evictionapi.SignalMemoryAvailable)) - before; d != 1 {
		t.Errorf("kubelet_evictions delta %v, want 1", d)
	}
	if !h.m.IsUnderMemoryPressure() {
		t.Error("MemoryPressure not reported after the fast pass")
	}

	// While the hog terminates, the pressure still shows in the cgroups:
	// no second victim, from either path.
	h.clock.Step(time.Second)
	if got := h.m.fastPass(ctx, h.activePods, "test"); got != nil {
		t.Errorf("second fast pass while the hog terminates evicted %v", podNames(got))
	}
	h.summary.set(func() *statsapi.Summary {
		n := fakeHealthyNode()
		n.memAvail, n.memWS = 600*mi, 7*gi+424*mi
		return n.summary(h.clock.Now(), st...)
	}())
	if ev := h.sync(); ev != nil {
		t.Errorf("monitoring pass while the hog terminates evicted %v", podNames(ev))
	}

	// Summary stats from before the fast pass's figures, once the hog is
	// gone, must not evict the idle pod either.
	h.cleanedUp(hog)
	h.pods = []*v1.Pod{idle}
	h.clock.Step(time.Second)
	h.summary.set(func() *statsapi.Summary {
		n := fakeHealthyNode()
		n.memAvail, n.memWS = 600*mi, 7*gi+424*mi
		return n.summary(mgrEpoch.Add(2*time.Second), st[1])
	}())
	if ev := h.sync(); ev != nil {
		t.Errorf("monitoring pass on stats older than the fast pass evicted %v", podNames(ev))
	}
	if n := len(h.killer.get()); n != 1 {
		t.Errorf("%d kills in all, want 1", n)
	}

	// Fresh stats that still show the pressure: the hog's cleanup has
	// reached the decision, so the monitoring pass evicts the idle pod.
	h.clock.Step(time.Second)
	h.summary.set(func() *statsapi.Summary {
		n := fakeHealthyNode()
		n.memAvail, n.memWS = 600*mi, 7*gi+424*mi
		return n.summary(h.clock.Now(), st[1])
	}())
	if got := podNames(h.sync()); !reflect.DeepEqual(got, []string{"idle"}) {
		t.Errorf("monitoring pass on fresh stats after the hog's cleanup evicted %v, want [idle]", got)
	}
}

// Right after the kubelet starts, the Summary API may not answer yet (the
// node object is not there, stats are not collected): the fast path then
// measures memory.available against the machine's memory and detects the
// filesystem layout itself.
func TestFastPassBeforeAnyMonitoringPass(t *testing.T) {
	hog, idle, pods, st := fastPods()
	h := newFastHarness(t, pods, st)
	h.m.fast.memcg.capacity = 8 * gi
	h.m.fast.diskInfo = h.disk
	ctx := context.Background()
	h.cgroups(5*gi, map[*v1.Pod]int64{hog: 100 * mi, idle: 500 * mi})
	if h.m.memoryCrossed(ctx) {
		t.Fatal("memoryCrossed with 3Gi of 8Gi available")
	}
	h.cgroups(7*gi+424*mi, map[*v1.Pod]int64{hog: 2*gi + 512*mi, idle: 500 * mi})
	if !h.m.memoryCrossed(ctx) {
		t.Fatal("memoryCrossed = false with 600Mi of 8Gi available")
	}
	if got := podNames(h.m.fastPass(ctx, h.activePods, "test")); !reflect.DeepEqual(got, []string{"hog"}) {
		t.Fatalf("fast pass evicted %v, want [hog]", got)
	}
	if h.summary.calls() != 0 {
		t.Errorf("the fast pass read the Summary API %d times", h.summary.calls())
	}
	if h.m.layout == nil {
		t.Error("the fast pass did not detect the filesystem layout")
	}
	if !h.m.IsUnderMemoryPressure() {
		t.Error("MemoryPressure not reported after the fast pass")
	}

	// The bench's oom scenario: only allocatable is tight (a kubelet
	// restarted just before a hog started, and its first pass failed).
	t.Run("allocatableMemory.available against the pods' cgroup limit", func(t *testing.T) {
		h := newFastHarness(t, pods, st)
		h.m.config.Thresholds = []evictionapi.Threshold{hard(evictionapi.SignalAllocatableMemoryAvailable, "500Mi")}
		h.m.fast.diskInfo = h.disk
		h.cgroups(3*gi, map[*v1.Pod]int64{hog: 100 * mi, idle: 500 * mi})
		writeCgroup(t, h.mount, "kubepods", map[string]string{"memory.limit_in_bytes": i64s(3 * gi)})
		if h.m.memoryCrossed(ctx) {
			t.Fatal("memoryCrossed with 2.4Gi of the pods' 3Gi available")
		}
		h.cgroups(5*gi, map[*v1.Pod]int64{hog: 2*gi + 200*mi, idle: 500 * mi})
		if !h.m.memoryCrossed(ctx) {
			t.Fatal("memoryCrossed = false with 300Mi of the pods' 3Gi available")
		}
		if got := podNames(h.m.fastPass(ctx, h.activePods, "test")); !reflect.DeepEqual(got, []string{"hog"}) {
			t.Fatalf("fast pass evicted %v, want [hog]", got)
		}
	})
	t.Run("without a layout source it waits for the monitoring loop", func(t *testing.T) {
		h := newFastHarness(t, pods, st)
		h.m.fast.memcg.capacity = 8 * gi
		h.cgroups(7*gi+424*mi, map[*v1.Pod]int64{hog: 2*gi + 512*mi})
		if got := h.m.fastPass(ctx, h.activePods, "test"); got != nil {
			t.Errorf("fast pass evicted %v without a filesystem layout", podNames(got))
		}
	})
}

func TestFastPathWatcherEvicts(t *testing.T) {
	hog, idle, pods, st := fastPods()
	h := newFastHarness(t, pods, st)
	h.cgroups(5*gi, map[*v1.Pod]int64{hog: 100 * mi, idle: 500 * mi})
	h.sync()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { defer close(done); h.m.watchMemory(ctx, h.activePods) }()

	h.cgroups(7*gi+424*mi, map[*v1.Pod]int64{hog: 2*gi + 512*mi, idle: 500 * mi})
	stepUntilKilled(t, h.mgrHarness, fastPathInterval)
	if got := h.killedNames(); !reflect.DeepEqual(got, []string{"hog"}) {
		t.Errorf("watcher evicted %v, want [hog]", got)
	}
	cancel()
	<-done
}

// stepUntilKilled steps the fake clock by a watcher's interval whenever
// the watcher waits on it (each tick is one read; the kill follows the
// first that sees the crossing), until a pod is killed; it fails the test
// after 30 s of real time.
func stepUntilKilled(t *testing.T, h *mgrHarness, interval time.Duration) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for len(h.killer.get()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the watcher did not evict within 30 s of real time")
		}
		if h.clock.HasWaiters() {
			h.clock.Step(interval)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestStartFastPath(t *testing.T) {
	_, _, pods, st := fastPods()
	t.Run("no hard memory threshold", func(t *testing.T) {
		h := newFastHarness(t, pods, st)
		h.m.config.Thresholds = []evictionapi.Threshold{soft(evictionapi.SignalMemoryAvailable, "1Gi", time.Minute)}
		if h.m.startFastPath(context.Background(), h.disk, h.activePods, nil) {
			t.Error("started without a hard memory threshold")
		}
	})
	t.Run("unreadable cgroups", func(t *testing.T) {
		h := newFastHarness(t, pods, st)
		if h.m.startFastPath(context.Background(), h.disk, h.activePods, nil) {
			t.Error("started with an empty cgroup tree")
		}
	})
	t.Run("readable cgroups", func(t *testing.T) {
		h := newFastHarness(t, pods, st)
		h.cgroups(5*gi, nil)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if !h.m.startFastPath(ctx, h.disk, h.activePods, nil) {
			t.Error("did not start")
		}
	})
	t.Run("gate off: Start leaves the fast path off", func(t *testing.T) {
		setGateDuringTest(t, evictionFastPath, false)
		h := mgrNewHarness(t, mgrMemoryConfig(), false, fakeHealthyNode().summary(mgrEpoch))
		if h.m.alpha[evictionFastPath] {
			t.Error("fastPath set with the gate off")
		}
	})
}

// With the gate on but the fast path not running (it could not start),
// the monitoring loop behaves as without the gate: no in-flight hold-off.
func TestFastPathNotRunningLeavesTheLoopAlone(t *testing.T) {
	setGateDuringTest(t, evictionFastPath, true)
	pods, st := mgrMemoryPods()
	h := mgrNewHarness(t, mgrMemoryConfig(), false, mgrMemoryPressureNode().summary(mgrEpoch, st...))
	h.pods = pods
	if got := podNames(h.sync()); !reflect.DeepEqual(got, []string{"besteffort"}) {
		t.Fatalf("first pass evicted %v, want [besteffort]", got)
	}
	h.pods = pods[:2]
	h.advance(10 * time.Second)
	if got := podNames(h.sync()); !reflect.DeepEqual(got, []string{"burstable"}) {
		t.Errorf("second pass evicted %v, want [burstable] (no fast path, so nothing holds it off)", got)
	}
}

// The fast path keeps the guarantees of a monitoring pass: a critical pod
// is never its victim, however large.
func TestFastPassSparesCriticalPods(t *testing.T) {
	hog, idle, _, st := fastPods()
	hog.Spec.Priority = ptrTo(systemCritical)
	h := newFastHarness(t, []*v1.Pod{idle, hog}, st)
	h.cgroups(5*gi, map[*v1.Pod]int64{hog: 100 * mi, idle: 500 * mi})
	h.sync()
	h.clock.Step(time.Second)
	h.cgroups(7*gi+424*mi, map[*v1.Pod]int64{hog: 2*gi + 512*mi, idle: 500 * mi})
	if got := podNames(h.m.fastPass(context.Background(), h.activePods, "test")); !reflect.DeepEqual(got, []string{"idle"}) {
		t.Errorf("fast pass evicted %v, want [idle] (the critical hog is spared)", got)
	}
}

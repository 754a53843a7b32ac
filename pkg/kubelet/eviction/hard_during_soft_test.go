//evictkit:file EvictionHardDuringSoft

package eviction

import (
	"slices"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// blockingKiller records kills; a kill with a grace period above one
// second (a soft eviction's) blocks until release is called.
type blockingKiller struct {
	mu       sync.Mutex
	kills    []fakeKill
	started  chan string
	released chan struct{}
	once     sync.Once
	running  sync.WaitGroup
}

func newBlockingKiller() *blockingKiller {
	return &blockingKiller{started: make(chan string, 16), released: make(chan struct{})}
}

func (k *blockingKiller) kill(pod *v1.Pod, isEvicted bool, grace *int64, fn func(*v1.PodStatus)) error {
	k.running.Add(1)
	defer k.running.Done()
	rec := fakeKill{pod: pod, isEvicted: isEvicted}
	if grace != nil {
		g := *grace
		rec.grace = &g
	}
	k.mu.Lock()
	k.kills = append(k.kills, rec)
	k.mu.Unlock()
	k.started <- pod.Name
	if grace != nil && *grace > hardEvictionGracePeriodSeconds {
		<-k.released
	}
	return nil
}

func (k *blockingKiller) release() { k.once.Do(func() { close(k.released) }) }

// log lists the kills as "pod/grace".
func (k *blockingKiller) log() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []string
	for _, c := range k.kills {
		g := "nil"
		if c.grace != nil {
			g = time.Duration(*c.grace * int64(time.Second)).String()
		}
		out = append(out, c.pod.Name+"/"+g)
	}
	return out
}

// hardDuringSoftNode is a node with memAvail bytes of memory available.
func hardDuringSoftNode(memAvail int64) fakeNode {
	n := fakeHealthyNode()
	n.memAvail, n.memWS = memAvail, 8*gi-memAvail
	return n
}

// A soft memory threshold (below 1Gi, 10 s grace) evicts a pod that asks
// for 60 s to terminate; its kill blocks like the kubelet's does for the
// whole grace period. With the gate the pass returns at once; while the
// kill runs, the soft threshold evicts no one else, a hard threshold met
// meanwhile (below 200Mi) acts at the next pass with a 1 s grace period,
// and once the kubelet has cleaned the soft victim up the soft threshold
// acts again. Without the gate the pass does not return until the kill
// does (upstream's behaviour), which this test reports as its failure.
func TestMgrHardDuringSoft(t *testing.T) {
	setGateDuringTest(t, evictionHardDuringSoft, true)
	cfg := Config{PressureTransitionPeriod: time.Minute, MaxPodGracePeriodSeconds: 60, Thresholds: []evictionapi.Threshold{
		soft(evictionapi.SignalMemoryAvailable, "1Gi", 10*time.Second),
		hard(evictionapi.SignalMemoryAvailable, "200Mi"),
	}}
	slow := pod("slow", withGrace(60))
	other := pod("other", withRequest(v1.ResourceMemory, "100Mi"))
	stats := func(avail int64) *statsapi.Summary {
		return hardDuringSoftNode(avail).summary(mgrEpoch,
			fakePodStats(slow, fakePodUsage{memWS: []int64{500 * mi}, ephem: -1}),
			fakePodStats(other, fakePodUsage{memWS: []int64{300 * mi}, ephem: -1}))
	}
	h := mgrNewHarness(t, cfg, false, stats(500*mi))
	h.pods = []*v1.Pod{slow, other}
	if !h.m.alpha[evictionHardDuringSoft] {
		t.Fatalf("gate %s is not on", evictionHardDuringSoft)
	}
	killer := newBlockingKiller()
	h.m.killPodFunc = killer.kill
	var cleanedMu sync.Mutex
	cleaned := map[string]bool{}
	h.m.podCleanedUp = func(p *v1.Pod) bool {
		cleanedMu.Lock()
		defer cleanedMu.Unlock()
		return cleaned[p.Name]
	}
	t.Cleanup(func() { killer.release(); killer.running.Wait() })

	// syncReturns runs a pass, fails unless it returns while a soft kill
	// blocks, and returns what the pass logged.
	syncReturns := func(what string) []string {
		t.Helper()
		logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = h.m.synchronize(klog.NewContext(t.Context(), logger), h.disk, h.activePods)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the pass did not return while the soft eviction's kill ran: it waits for the pod's grace period", what)
		}
		var messages []string
		for _, e := range logger.GetSink().(ktesting.Underlier).GetBuffer().Data() {
			messages = append(messages, e.Message)
		}
		return messages
	}
	waitKill := func(want string) {
		t.Helper()
		select {
		case name := <-killer.started:
			if name != want {
				t.Fatalf("killed %s, want %s", name, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no kill of %s started", want)
		}
	}
	expectKills := func(what string, want ...string) {
		t.Helper()
		if got := killer.log(); !slices.Equal(got, want) {
			t.Fatalf("%s: kills %v, want %v", what, got, want)
		}
	}

	syncReturns("soft threshold first met")
	expectKills("within the soft grace period")

	h.advance(10 * time.Second)
	syncReturns("soft grace period over")
	waitKill("slow")
	expectKills("soft grace period over", "slow/1m0s")

	h.advance(10 * time.Second)
	logged := syncReturns("soft victim terminating")
	if !slices.Contains(logged, heldForSoftMessage) || slices.Contains(logged, inBackgroundMessage) {
		t.Fatalf("soft threshold met while its victim terminates: the pass logged %q, want %q and no new eviction", logged, heldForSoftMessage)
	}
	expectKills("soft threshold met while its victim terminates", "slow/1m0s")

	h.summary.set(stats(100 * mi))
	h.advance(time.Second)
	syncReturns("hard threshold met")
	waitKill("slow")
	expectKills("hard threshold met while the soft victim terminates", "slow/1m0s", "slow/1s")

	killer.release()
	killer.running.Wait()
	cleanedMu.Lock()
	cleaned["slow"] = true
	cleanedMu.Unlock()
	h.pods = []*v1.Pod{other}
	h.summary.set(hardDuringSoftNode(500*mi).summary(mgrEpoch, fakePodStats(other, fakePodUsage{memWS: []int64{300 * mi}, ephem: -1})))
	h.advance(31 * time.Second)
	syncReturns("soft victim cleaned up")
	waitKill("other")
	expectKills("soft threshold after its victim was cleaned up", "slow/1m0s", "slow/1s", "other/1m0s")
}

// The hold on soft thresholds ends when every soft victim is cleaned up,
// or at the latest when upstream's pass would have stopped waiting: the
// kill's timeout (1.5 × grace, at least 10 s) plus the 30 s cleanup wait.
func TestSoftStillInFlight(t *testing.T) {
	a, b := pod("a"), pod("b")
	at := mgrEpoch
	for _, tc := range []struct {
		name      string
		grace     int64
		cleanedUp map[*v1.Pod]bool
		after     time.Duration
		want      []string
	}{
		{name: "none cleaned up", grace: 60, after: time.Minute, want: []string{"a", "b"}},
		{name: "one cleaned up", grace: 60, cleanedUp: map[*v1.Pod]bool{a: true}, after: time.Minute, want: []string{"b"}},
		{name: "all cleaned up", grace: 60, cleanedUp: map[*v1.Pod]bool{a: true, b: true}, after: time.Second},
		{name: "just before the bound", grace: 60, after: 90*time.Second + podCleanupTimeout - time.Nanosecond, want: []string{"a", "b"}},
		{name: "at the bound", grace: 60, after: 90*time.Second + podCleanupTimeout},
		{name: "short grace: the 10 s minimum", grace: 2, after: 10*time.Second + podCleanupTimeout - time.Nanosecond, want: []string{"a", "b"}},
		{name: "short grace past the minimum", grace: 2, after: 10*time.Second + podCleanupTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := decisionState{}.advance(outcome{signal: evictionapi.SignalMemoryAvailable, evicted: []*v1.Pod{a, b}, at: at, soft: &softKill{grace: tc.grace}})
			kept, until := softStillInFlight(&s, tc.cleanedUp, at.Add(tc.after))
			var got []string
			for _, p := range kept {
				got = append(got, p.Name)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("still in flight: %v, want %v", got, tc.want)
			}
			if len(kept) > 0 && !until.Equal(s.softHoldUntil) {
				t.Errorf("hold until %v, want %v", until, s.softHoldUntil)
			}
		})
	}
}

// Without the gate nothing is held: advance records no soft victims.
func TestMgrHardDuringSoftGateOff(t *testing.T) {
	setGateDuringTest(t, evictionHardDuringSoft, false)
	cfg := Config{PressureTransitionPeriod: time.Minute, MaxPodGracePeriodSeconds: 60, Thresholds: []evictionapi.Threshold{
		soft(evictionapi.SignalMemoryAvailable, "1Gi", 10*time.Second),
	}}
	slow := pod("slow", withGrace(60))
	h := mgrNewHarness(t, cfg, false, hardDuringSoftNode(500*mi).summary(mgrEpoch, fakePodStats(slow, fakePodUsage{memWS: []int64{500 * mi}, ephem: -1})))
	h.pods = []*v1.Pod{slow}
	h.sync()
	h.advance(10 * time.Second)
	if got := h.sync(); len(got) != 1 || got[0] != slow {
		t.Fatalf("evicted %v, want [slow] returned to the loop, which waits for its cleanup", got)
	}
	if len(h.m.state.softInFlight) != 0 {
		t.Fatalf("soft victims recorded with the gate off: %v", h.m.state.softInFlight)
	}
}

package eviction

import (
	"reflect"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// memoryInput is a node with 8Gi of memory, a hard memory.available<1Gi
// threshold, and the given memory available, pods and stats.
func memoryInput(available int64, pods []*v1.Pod, stats ...statsapi.PodStats) *decideInput {
	thresholds := []evictionapi.Threshold{hard(sigMem, "1Gi")}
	prev := newDecisionState(len(thresholds))
	return &decideInput{
		thresholds:               thresholds,
		prev:                     &prev,
		obs:                      observations(ob{signal: sigMem, available: available, capacity: 8 << 30, at: t0}),
		pods:                     pods,
		stats:                    statsIndex(stats...),
		layout:                   singleFs,
		now:                      t0,
		transition:               5 * time.Minute,
		maxPodGracePeriodSeconds: 30,
	}
}

func victimNames(vs []victim) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.pod.Name)
	}
	return out
}

func TestDecideNoThresholdMet(t *testing.T) {
	d := decide(memoryInput(2<<30, []*v1.Pod{pod("a")}))
	if d.target != nil || d.storageVictims != nil || len(d.conditions) != 0 {
		t.Errorf("want nothing to do, got target=%+v storage=%v conditions=%v", d.target, d.storageVictims, d.conditions)
	}
}

func TestDecideHardMemoryThreshold(t *testing.T) {
	pods := []*v1.Pod{pod("within", withMemRequest("1Gi")), pod("greedy", withPriority(5), withMemRequest("100Mi"))}
	in := memoryInput(512<<20, pods,
		podStats("within", withWorkingSet("900Mi")),
		podStats("greedy", withWorkingSet("3Gi"), withContainerStats(cStats("app", cWorkingSet("3Gi")))),
	)
	d := decide(in)
	if !reflect.DeepEqual(d.conditions, memPressure) {
		t.Errorf("conditions %v, want %v", d.conditions, memPressure)
	}
	tg := d.target
	if tg == nil {
		t.Fatal("want a reclaim target")
	}
	if tg.threshold.Signal != sigMem || tg.resource != v1.ResourceMemory || tg.class != rankByMemory || tg.steps != nil {
		t.Errorf("target %s/%s class %d steps %v, want memory.available/memory, memory ranking, no node reclaim",
			tg.threshold.Signal, tg.resource, tg.class, tg.steps)
	}
	if got := rankedNames(tg.ranked); !reflect.DeepEqual(got, []string{"greedy", "within"}) {
		t.Errorf("ranked %v, want [greedy within]", got)
	}
	if len(tg.victims) != 1 {
		t.Fatalf("want exactly one victim, got %v", victimNames(tg.victims))
	}
	v := tg.victims[0]
	if v.pod.Name != "greedy" || v.rank != 0 || v.gracePeriodSeconds != 1 {
		t.Errorf("victim %s rank %d grace %d, want greedy rank 0 grace 1", v.pod.Name, v.rank, v.gracePeriodSeconds)
	}
	ob, _ := in.obs.get(sigMem)
	wantMsg, wantAnn := thresholdEvictionMessage(v1.ResourceMemory, &in.thresholds[0], &ob, pods[1], in.stats.lookup(pods[1]), false)
	if v.message != wantMsg || !reflect.DeepEqual(v.annotations, wantAnn) {
		t.Errorf("victim message %q %v, want %q %v", v.message, v.annotations, wantMsg, wantAnn)
	}
	const literal = "The node was low on resource: memory. Threshold quantity: 1Gi, available: 512Mi. " +
		"Container app was using 3Gi, request is 100Mi, has larger consumption of memory. "
	if v.message != literal {
		t.Errorf("victim message %q, want %q", v.message, literal)
	}
	if v.reason == "" {
		t.Error("victim has no ranking reason")
	}
}

func TestDecideSoftThresholdGracePeriod(t *testing.T) {
	var (
		ten    = int64(10)
		sixty  = int64(60)
		zero   = int64(0)
		thirty = int64(30)
	)
	cases := []struct {
		name     string
		hard     bool
		podGrace *int64
		maxGrace int64
		want     int64
	}{
		{name: "soft: pod grace below the cap", podGrace: &ten, maxGrace: 30, want: 10},
		{name: "soft: pod grace above the cap", podGrace: &sixty, maxGrace: 30, want: 30},
		{name: "soft: pod grace equal to the cap", podGrace: &thirty, maxGrace: 30, want: 30},
		{name: "soft: zero pod grace", podGrace: &zero, maxGrace: 30, want: 0},
		{name: "soft: pod without grace gets the cap", maxGrace: 30, want: 30},
		{name: "soft: zero cap", podGrace: &ten, maxGrace: 0, want: 0},
		{name: "hard: always one second", hard: true, podGrace: &sixty, maxGrace: 30, want: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := pod("a")
			p.Spec.TerminationGracePeriodSeconds = tc.podGrace
			in := memoryInput(512<<20, []*v1.Pod{p}, podStats("a"))
			in.maxPodGracePeriodSeconds = tc.maxGrace
			if !tc.hard {
				in.thresholds = []evictionapi.Threshold{soft(sigMem, "1Gi", time.Minute)}
				in.prev.firstMet[0] = t0.Add(-time.Minute)
			}
			d := decide(in)
			if d.target == nil || len(d.target.victims) != 1 {
				t.Fatalf("want one victim, got target %+v", d.target)
			}
			if got := d.target.victims[0].gracePeriodSeconds; got != tc.want {
				t.Errorf("grace %d, want %d", got, tc.want)
			}
		})
	}
}

func TestDecideSoftThresholdWithinGraceHasNoTarget(t *testing.T) {
	in := memoryInput(512<<20, []*v1.Pod{pod("a")})
	in.thresholds = []evictionapi.Threshold{soft(sigMem, "1Gi", time.Minute)}
	in.prev.firstMet[0] = t0.Add(-59 * time.Second)
	d := decide(in)
	if d.target != nil {
		t.Errorf("want no target within the grace period, got %+v", d.target)
	}
	if !reflect.DeepEqual(d.conditions, memPressure) {
		t.Errorf("conditions %v, want %v", d.conditions, memPressure)
	}
}

func TestDecideSkipsCriticalPods(t *testing.T) {
	t.Run("next pod is evicted", func(t *testing.T) {
		pods := []*v1.Pod{pod("plain"), pod("static", staticPod()), pod("system", withPriority(systemCritical))}
		d := decide(memoryInput(512<<20, pods,
			podStats("static", withWorkingSet("6Gi")),
			podStats("plain", withWorkingSet("1Gi")),
			podStats("system", withWorkingSet("7Gi")),
		))
		if got := rankedNames(d.target.ranked); !reflect.DeepEqual(got, []string{"static", "plain", "system"}) {
			t.Fatalf("ranked %v, want [static plain system]", got)
		}
		if len(d.target.victims) != 1 || d.target.victims[0].pod.Name != "plain" || d.target.victims[0].rank != 1 {
			t.Errorf("victims %v, want plain at rank 1", victimNames(d.target.victims))
		}
	})
	t.Run("only critical pods leaves no victim", func(t *testing.T) {
		d := decide(memoryInput(512<<20, []*v1.Pod{pod("static", staticPod())}, podStats("static", withWorkingSet("6Gi"))))
		if d.target == nil || len(d.target.victims) != 0 || len(d.target.ranked) != 1 {
			t.Errorf("want a target with one ranked pod and no victim, got %+v", d.target)
		}
	})
}

func TestDecideNoPods(t *testing.T) {
	d := decide(memoryInput(512<<20, nil))
	if d.target == nil {
		t.Fatal("want a target even without pods")
	}
	if len(d.target.victims) != 0 || len(d.target.ranked) != 0 {
		t.Errorf("want no victims and nothing ranked, got %v / %v", victimNames(d.target.victims), rankedNames(d.target.ranked))
	}
}

func TestDecidePodWithoutStatsIsFirstVictim(t *testing.T) {
	pods := []*v1.Pod{pod("measured"), pod("unknown")}
	d := decide(memoryInput(512<<20, pods, podStats("measured", withWorkingSet("7Gi"))))
	v := d.target.victims[0]
	if v.pod.Name != "unknown" {
		t.Fatalf("victim %s, want unknown", v.pod.Name)
	}
	if v.message != "The node was low on resource: memory. Threshold quantity: 1Gi, available: 512Mi. " || len(v.annotations) != 0 {
		t.Errorf("victim message %q annotations %v, want the node part only and no annotations", v.message, v.annotations)
	}
}

func TestDecideLocalStorage(t *testing.T) {
	hog := func() *v1.Pod { return pod("hog", withVolumes(emptyDirVol("cache", "1Mi", ""))) }
	hogStats := podStats("hog", withVolumeStats("cache", 2*mi, 1), withWorkingSet("1Mi"))

	t.Run("violations short-circuit thresholds", func(t *testing.T) {
		in := memoryInput(512<<20, []*v1.Pod{pod("big"), hog()}, podStats("big", withWorkingSet("7Gi")), hogStats)
		in.localStorageIsolation = true
		d := decide(in)
		if d.target != nil {
			t.Errorf("want no threshold target, got %+v", d.target)
		}
		if got := flatten(d.storageVictims); !reflect.DeepEqual(got, []violation{emptyDirOver("hog", "cache", "1Mi")}) {
			t.Errorf("storage victims %q", got)
		}
		if !reflect.DeepEqual(d.conditions, memPressure) || !d.next.acting[0] {
			t.Errorf("state must still advance: conditions %v acting %v", d.conditions, d.next.acting)
		}
	})
	t.Run("violations are ignored without isolation", func(t *testing.T) {
		in := memoryInput(512<<20, []*v1.Pod{pod("big"), hog()}, podStats("big", withWorkingSet("7Gi")), hogStats)
		d := decide(in)
		if d.storageVictims != nil || d.target == nil || victimNames(d.target.victims)[0] != "big" {
			t.Errorf("want threshold eviction of big, got storage %v target %+v", d.storageVictims, d.target)
		}
	})
	t.Run("no violation falls through to thresholds", func(t *testing.T) {
		in := memoryInput(512<<20, []*v1.Pod{pod("big")}, podStats("big", withWorkingSet("7Gi")))
		in.localStorageIsolation = true
		d := decide(in)
		if d.storageVictims != nil || d.target == nil || len(d.target.victims) != 1 {
			t.Errorf("want a threshold victim, got storage %v target %+v", d.storageVictims, d.target)
		}
	})
	t.Run("violations are found without any threshold met", func(t *testing.T) {
		in := memoryInput(4<<30, []*v1.Pod{hog()}, hogStats)
		in.localStorageIsolation = true
		d := decide(in)
		if len(d.storageVictims) != 1 || d.target != nil {
			t.Errorf("want one storage victim, got %v target %+v", flatten(d.storageVictims), d.target)
		}
	})
	t.Run("dedicated imagefs is passed on", func(t *testing.T) {
		p := pod("layer", withStorageLimit("10Mi"))
		s := podStats("layer", withContainerStats(cStats("app", cRootfs(20*mi, 1), cLogs(mi, 1))))
		for _, tc := range []struct {
			layout fsLayout
			want   int
		}{{singleFs, 1}, {dedicatedFs, 0}, {splitFs, 0}} {
			in := memoryInput(4<<30, []*v1.Pod{p}, s)
			in.localStorageIsolation = true
			in.layout = tc.layout
			if got := len(decide(in).storageVictims); got != tc.want {
				t.Errorf("layout %+v: %d storage victims, want %d", tc.layout, got, tc.want)
			}
		}
	})
	t.Run("memory-backed volume gate is passed on", func(t *testing.T) {
		p := pod("ram", withVolumes(emptyDirVol("shm", "1Mi", v1.StorageMediumMemory)))
		s := podStats("ram", withVolumeStats("shm", 2*mi, 1))
		for _, gate := range []bool{false, true} {
			in := memoryInput(4<<30, []*v1.Pod{p}, s)
			in.localStorageIsolation = true
			in.gates.memoryBackedVolumes = gate
			want := 1
			if gate {
				want = 0
			}
			if got := len(decide(in).storageVictims); got != want {
				t.Errorf("gate %v: %d storage victims, want %d", gate, got, want)
			}
		}
	})
}

func TestDecidePodLevelResourcesGate(t *testing.T) {
	p := pod("big", withPodRequests(rl("memory", "1Gi")))
	for _, gate := range []bool{false, true} {
		in := memoryInput(512<<20, []*v1.Pod{p}, podStats("big", withWorkingSet("3Gi")))
		in.gates.podLevelResources = gate
		v := decide(in).target.victims[0]
		if got := strings.Contains(v.message, "Pod big was using 3Gi, request is 1Gi"); got != gate {
			t.Errorf("gate %v: message %q names the pod: %v", gate, v.message, got)
		}
	}
}

func TestDecideStaleStatsGiveNoTarget(t *testing.T) {
	in := memoryInput(512<<20, []*v1.Pod{pod("a")}, podStats("a"))
	in.prev.lastObservations = observations(ob{signal: sigMem, available: 512 << 20, capacity: 8 << 30, at: t0})
	d := decide(in)
	if d.target != nil {
		t.Errorf("want no target on stale stats, got %+v", d.target)
	}
	if !reflect.DeepEqual(d.conditions, memPressure) {
		t.Errorf("conditions %v, want %v", d.conditions, memPressure)
	}
}

func TestDecideTargetsFirstActionableThreshold(t *testing.T) {
	in := memoryInput(512<<20, []*v1.Pod{pod("a")}, podStats("a"))
	in.thresholds = []evictionapi.Threshold{hard(sigNodeFs, "1Gi"), hard(sigPID, "100"), hard(sigMem, "1Gi")}
	prev := newDecisionState(3)
	in.prev = &prev
	in.obs = observations(
		ob{signal: sigMem, available: 1, capacity: 8 << 30},
		ob{signal: sigNodeFs, available: 1, capacity: 8 << 30},
		ob{signal: sigPID, available: 1, capacity: 1000},
	)
	d := decide(in)
	if d.target == nil || d.target.threshold.Signal != sigMem {
		t.Fatalf("want memory.available as target, got %+v", d.target)
	}
	var got []evictionapi.Signal
	for _, th := range d.target.actionable {
		got = append(got, th.Signal)
	}
	if want := []evictionapi.Signal{sigMem, sigNodeFs, sigPID}; !reflect.DeepEqual(got, want) {
		t.Errorf("actionable %v, want %v", got, want)
	}
}

func TestDecideReclaimStepsPerLayout(t *testing.T) {
	both := []reclaimStep{reclaimContainers, reclaimImages}
	containers := []reclaimStep{reclaimContainers}
	images := []reclaimStep{reclaimImages}
	layouts := []struct {
		name   string
		layout fsLayout
		steps  map[evictionapi.Signal][]reclaimStep
	}{
		{"single", singleFs, map[evictionapi.Signal][]reclaimStep{
			sigNodeFs: both, sigNodeIn: both, sigImgFs: both, sigImgIn: both, sigCtrFs: both, sigCtrIn: both,
		}},
		{"split without imagefs", splitOnlyFs, map[evictionapi.Signal][]reclaimStep{
			sigNodeFs: both, sigNodeIn: both, sigImgFs: both, sigImgIn: both, sigCtrFs: both, sigCtrIn: both,
		}},
		{"dedicated imagefs", dedicatedFs, map[evictionapi.Signal][]reclaimStep{
			sigImgFs: both, sigImgIn: both, sigCtrFs: both, sigCtrIn: both,
		}},
		{"split imagefs", splitFs, map[evictionapi.Signal][]reclaimStep{
			sigNodeFs: containers, sigNodeIn: containers, sigImgFs: images, sigImgIn: images, sigCtrFs: containers, sigCtrIn: containers,
		}},
	}
	resources := map[evictionapi.Signal]v1.ResourceName{
		sigMem: v1.ResourceMemory, sigAlloc: v1.ResourceMemory, sigPID: resourcePids,
		sigNodeFs: v1.ResourceEphemeralStorage, sigImgFs: v1.ResourceEphemeralStorage, sigCtrFs: v1.ResourceEphemeralStorage,
		sigNodeIn: resourceInodes, sigImgIn: resourceInodes, sigCtrIn: resourceInodes,
	}
	//evictkit:begin EvictionPSI
	resources[signalMemoryPSISome], resources[signalMemoryPSIFull] = v1.ResourceMemory, v1.ResourceMemory
	//evictkit:end EvictionPSI
	classes := map[v1.ResourceName]rankClass{
		v1.ResourceMemory: rankByMemory, resourcePids: rankByProcesses,
		v1.ResourceEphemeralStorage: rankByDiskBytes, resourceInodes: rankByDiskInodes,
	}
	for _, l := range layouts {
		for _, info := range signalTable {
			signal := info.signal
			in := memoryInput(0, []*v1.Pod{pod("a")}, podStats("a"))
			in.layout = l.layout
			// A threshold of the signal's own operator, met: below 1000, or
			// (a signal that grows with pressure) above 1.
			th, available := hard(signal, "1000"), int64(1)
			if op := ruleOf(signal).operator; op != evictionapi.OpLessThan {
				th, available = hard(signal, "1"), 5000
				th.Operator = op
			}
			in.thresholds = []evictionapi.Threshold{th}
			in.obs = observations(ob{signal: signal, available: available, capacity: 10000})
			tg := decide(in).target
			if tg == nil {
				t.Errorf("%s/%s: no target", l.name, signal)
				continue
			}
			if !reflect.DeepEqual(tg.steps, l.steps[signal]) {
				t.Errorf("%s/%s: steps %v, want %v", l.name, signal, tg.steps, l.steps[signal])
			}
			if tg.resource != resources[signal] || tg.class != classes[resources[signal]] {
				t.Errorf("%s/%s: resource %s class %d, want %s class %d", l.name, signal, tg.resource, tg.class, resources[signal], classes[resources[signal]])
			}
		}
	}
}

func TestDecideDiskVictimMessage(t *testing.T) {
	p := pod("writer", withStorageRequest("1Mi"))
	s := podStats("writer", withContainerStats(cStats("app", cRootfs(30*mi, 5), cLogs(2*mi, 1))))
	in := memoryInput(0, []*v1.Pod{p}, s)
	in.layout = dedicatedFs
	in.thresholds = []evictionapi.Threshold{hardPct(sigImgFs, 0.25)}
	in.obs = observations(ob{signal: sigImgFs, available: 1 << 30, capacity: 8 << 30})
	v := decide(in).target.victims[0]
	const want = "The node was low on resource: ephemeral-storage. Threshold quantity: 2Gi, available: 1Gi. " +
		"Container app was using 32Mi, request is 1Mi, has larger consumption of ephemeral-storage. "
	if v.message != want {
		t.Errorf("message %q, want %q", v.message, want)
	}
	if !reflect.DeepEqual(v.annotations, annotations("app", "32Mi", "ephemeral-storage")) {
		t.Errorf("annotations %v", v.annotations)
	}
}

//go:build evictbench

package harness

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
	"k8s.io/kubernetes/pkg/kubelet/server/stats"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"

	ours "evictbench/ours"
	upstream "evictbench/upstream"
)

// handle is one freshly built manager of either implementation.
type handle struct {
	clock    *testingclock.FakeClock
	sync     func(ctx context.Context) ([]*v1.Pod, error)
	pressure func() string
}

type impl struct {
	name  string
	build func(w *World) (*handle, error)
	// start builds a manager on the real clock that reads its summaries
	// from p and starts its monitoring loop, as the kubelet does.
	start func(ctx context.Context, w *World, p stats.SummaryProvider) error
}

var (
	nodeRef = &v1.ObjectReference{Kind: "Node", Name: "bench-node", UID: "bench-node"}

	pressureTransitionPeriod = 5 * time.Minute
	maxPodGracePeriodSeconds = int64(30)
)

type pressureReporter interface {
	IsUnderMemoryPressure() bool
	IsUnderDiskPressure() bool
	IsUnderPIDPressure() bool
}

func pressure(m pressureReporter) string {
	var c []string
	if m.IsUnderMemoryPressure() {
		c = append(c, "MemoryPressure")
	}
	if m.IsUnderDiskPressure() {
		c = append(c, "DiskPressure")
	}
	if m.IsUnderPIDPressure() {
		c = append(c, "PIDPressure")
	}
	return "[" + strings.Join(c, ",") + "]"
}

func newClock() *testingclock.FakeClock {
	return testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
}

// impls are run in this order in every benchmark group: upstream first, so
// that it is the baseline column.
var impls = []impl{
	{name: "upstream", build: func(w *World) (*handle, error) {
		thresholds, err := upstream.ParseThresholdConfig(AllocatableConfig, EvictionHard(), nil, nil, nil)
		if err != nil {
			return nil, err
		}
		clk := newClock()
		cfg := upstream.Config{
			PressureTransitionPeriod: pressureTransitionPeriod,
			MaxPodGracePeriodSeconds: maxPodGracePeriodSeconds,
			Thresholds:               thresholds,
		}
		m, _ := upstream.NewManager(w, cfg, w.Kill, GC{}, GC{}, Recorder{}, nodeRef, clk, true)
		podFunc := upstream.ActivePodsFunc(w.ActivePods)
		return &handle{
			clock: clk,
			sync: func(ctx context.Context) ([]*v1.Pod, error) {
				return upstream.BenchSynchronize(ctx, m, DiskInfo{}, podFunc)
			},
			pressure: func() string { return pressure(m) },
		}, nil
	},
		start: func(ctx context.Context, w *World, p stats.SummaryProvider) error {
			thresholds, err := upstream.ParseThresholdConfig(AllocatableConfig, EvictionHard(), nil, nil, nil)
			if err != nil {
				return err
			}
			cfg := upstream.Config{
				PressureTransitionPeriod: pressureTransitionPeriod,
				MaxPodGracePeriodSeconds: maxPodGracePeriodSeconds,
				Thresholds:               thresholds,
			}
			m, _ := upstream.NewManager(p, cfg, w.Kill, GC{}, GC{}, Recorder{}, nodeRef, clock.RealClock{}, true)
			m.Start(ctx, DiskInfo{}, w.ActivePods, cleanedUp, 0)
			return nil
		}},
	{name: "ours", build: func(w *World) (*handle, error) {
		thresholds, err := ours.ParseThresholdConfig(AllocatableConfig, EvictionHard(), nil, nil, nil)
		if err != nil {
			return nil, err
		}
		clk := newClock()
		cfg := ours.Config{
			PressureTransitionPeriod: pressureTransitionPeriod,
			MaxPodGracePeriodSeconds: maxPodGracePeriodSeconds,
			Thresholds:               thresholds,
		}
		m, _ := ours.NewManager(w, cfg, w.Kill, GC{}, GC{}, Recorder{}, nodeRef, clk, true)
		podFunc := ours.ActivePodsFunc(w.ActivePods)
		return &handle{
			clock: clk,
			sync: func(ctx context.Context) ([]*v1.Pod, error) {
				return ours.BenchSynchronize(ctx, m, DiskInfo{}, podFunc)
			},
			pressure: func() string { return pressure(m) },
		}, nil
	},
		start: func(ctx context.Context, w *World, p stats.SummaryProvider) error {
			thresholds, err := ours.ParseThresholdConfig(AllocatableConfig, EvictionHard(), nil, nil, nil)
			if err != nil {
				return err
			}
			cfg := ours.Config{
				PressureTransitionPeriod: pressureTransitionPeriod,
				MaxPodGracePeriodSeconds: maxPodGracePeriodSeconds,
				Thresholds:               thresholds,
			}
			m, _ := ours.NewManager(p, cfg, w.Kill, GC{}, GC{}, Recorder{}, nodeRef, clock.RealClock{}, true)
			m.Start(ctx, DiskInfo{}, w.ActivePods, cleanedUp, 0)
			return nil
		}},
}

// cleanedUp reports every evicted pod as cleaned up at once.
func cleanedUp(*v1.Pod) bool { return true }

// benchContext carries a logger that drops everything, so that log output
// (identical in content for both implementations) is not what is measured.
func benchContext() context.Context {
	return klog.NewContext(context.Background(), logr.Discard())
}

var (
	worldsMu sync.Mutex
	worlds   = map[int]*World{}
	verified = map[string]error{}
)

func world(n int) *World {
	worldsMu.Lock()
	defer worldsMu.Unlock()
	w, ok := worlds[n]
	if !ok {
		w = NewWorld(n)
		worlds[n] = w
	}
	return w
}

const verifyPasses = 3

// trace runs verifyPasses passes on a fresh manager and describes what each
// pass decided: the pods evicted (as returned and as killed), the node
// conditions reported afterwards and, for each kill, the grace period
// override and the status update (phase, reason, message, condition).
func trace(ctx context.Context, w *World, im impl) ([]string, error) {
	h, err := im.build(w)
	if err != nil {
		return nil, err
	}
	w.CaptureStatus = true
	defer func() { w.CaptureStatus = false }()
	var out, statuses []string
	for pass := 1; pass <= verifyPasses; pass++ {
		h.clock.Step(time.Second)
		kills := w.Kills
		w.LastVictim = ""
		evicted, err := h.sync(ctx)
		if err != nil {
			return nil, fmt.Errorf("pass %d: %w", pass, err)
		}
		names := make([]string, 0, len(evicted))
		for _, p := range evicted {
			names = append(names, p.Name)
		}
		out = append(out, fmt.Sprintf("pass %d: evicted=[%s] killed=%d last-killed=%q conditions=%s",
			pass, strings.Join(names, ","), w.Kills-kills, w.LastVictim, h.pressure()))
		if w.Kills > kills {
			statuses = append(statuses, fmt.Sprintf("pass %d: grace=%s %s", pass, w.LastGrace, w.LastStatus))
		}
	}
	return append(out, statuses...), nil
}

// verify checks, once per scenario and size, that both implementations
// decide the same thing on this input and that it is the expected decision.
func verify(b *testing.B, w *World) {
	key := fmt.Sprintf("scenario=%s/pods=%d", w.Scenario, w.Size)
	worldsMu.Lock()
	err, done := verified[key]
	worldsMu.Unlock()
	if !done {
		err = doVerify(b, w)
		worldsMu.Lock()
		verified[key] = err
		worldsMu.Unlock()
	}
	if err != nil {
		b.Fatalf("%s: %v", key, err)
	}
}

func doVerify(b *testing.B, w *World) error {
	ctx := benchContext()
	traces := make([][]string, len(impls))
	for i, im := range impls {
		t, err := trace(ctx, w, im)
		if err != nil {
			return fmt.Errorf("impl=%s: %w", im.name, err)
		}
		traces[i] = t
	}
	note := ""
	if w.Scenario == Disk {
		quantities, err := diskThresholdQuantities()
		if err != nil {
			return err
		}
		for _, t := range traces {
			for p := range t {
				for _, q := range quantities {
					t[p] = strings.ReplaceAll(t[p], "Threshold quantity: "+q+",", "Threshold quantity: <nodefs|imagefs>,")
				}
			}
		}
		note = " (eviction messages compared up to which of nodefs/imagefs.available they quote: upstream picks one at random)"
	}
	for i := 1; i < len(impls); i++ {
		if len(traces[i]) != len(traces[0]) {
			return fmt.Errorf("decisions differ:\n  impl=%s %s\n  impl=%s %s", impls[0].name,
				strings.Join(traces[0], "\n    "), impls[i].name, strings.Join(traces[i], "\n    "))
		}
		for p := range traces[0] {
			if traces[i][p] != traces[0][p] {
				return fmt.Errorf("decisions differ:\n  impl=%s %s\n  impl=%s %s",
					impls[0].name, traces[0][p], impls[i].name, traces[i][p])
			}
		}
	}
	victim := w.ExpectedVictim()
	condition := map[Scenario]string{Idle: "[]", Memory: "[MemoryPressure]", Disk: "[DiskPressure]"}[w.Scenario]
	killed := 0
	if victim != "" {
		killed = 1
	}
	for p, got := range traces[0][:verifyPasses] {
		want := fmt.Sprintf("pass %d: evicted=[%s] killed=%d last-killed=%q conditions=%s", p+1, victim, killed, victim, condition)
		if got != want {
			return fmt.Errorf("harness expectation not met (both implementations agree):\n  got  %s\n  want %s", got, want)
		}
	}
	if victim == "" {
		victim = "none"
	}
	b.Logf("verified scenario=%s pods=%d: upstream and ours evict %s on each of %d passes, conditions %s%s",
		w.Scenario, w.Size, victim, verifyPasses, condition, note)
	return nil
}

// diskThresholdQuantities are the nodefs.available and imagefs.available
// threshold quantities. On a single filesystem the disk scenario meets both
// with the same observations. Upstream collects the thresholds that are met
// by iterating over a map and orders them with an unstable sort under which
// these two are equal, so the threshold its eviction message quotes
// ("Threshold quantity: ...") varies at random from pass to pass; victim,
// ranking and reclaim are the same either way. The comparison therefore
// accepts either quantity.
func diskThresholdQuantities() ([]string, error) {
	thresholds, err := upstream.ParseThresholdConfig(AllocatableConfig, EvictionHard(), nil, nil, nil)
	if err != nil {
		return nil, err
	}
	capacity := resource.NewQuantity(nodeFsCapacity, resource.BinarySI)
	var qs []string
	for _, t := range thresholds {
		if t.Signal == evictionapi.SignalNodeFsAvailable || t.Signal == evictionapi.SignalImageFsAvailable {
			qs = append(qs, evictionapi.GetThresholdQuantity(t.Value, capacity).String())
		}
	}
	if len(qs) != 2 {
		return nil, fmt.Errorf("expected a nodefs.available and an imagefs.available threshold, got %v", qs)
	}
	return qs, nil
}

// BenchmarkSynchronize measures one synchronize pass per iteration on a
// manager that has already run two passes (filesystem layout detected,
// state warmed up).
func BenchmarkSynchronize(b *testing.B) {
	for _, sc := range Scenarios {
		for _, n := range Sizes {
			for _, im := range impls {
				b.Run(fmt.Sprintf("scenario=%s/pods=%d/impl=%s", sc, n, im.name), func(b *testing.B) {
					w := world(n)
					if w.Scenario != sc {
						w.SetScenario(sc)
					}
					verify(b, w)
					ctx := benchContext()
					h, err := im.build(w)
					if err != nil {
						b.Fatal(err)
					}
					for range 2 {
						h.clock.Step(time.Second)
						if _, err := h.sync(ctx); err != nil {
							b.Fatal(err)
						}
					}
					kills, passes := w.Kills, 0
					b.ReportAllocs()
					for b.Loop() {
						h.clock.Step(time.Second)
						if _, err := h.sync(ctx); err != nil {
							b.Fatal(err)
						}
						passes++
					}
					b.StopTimer()
					want := passes
					if sc == Idle {
						want = 0
					}
					if got := w.Kills - kills; got != want {
						b.Fatalf("%d pods killed in %d passes, want %d", got, passes, want)
					}
				})
			}
		}
	}
}

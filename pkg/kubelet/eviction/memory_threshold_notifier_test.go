//evictkit:file notifier
//go:build !windows

package eviction

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// stubMemcgNotifier is a CgroupNotifier that records how it was made and
// used. Its Start hands the event channel to the test and blocks like the
// real one until Stop or cancellation.
type stubMemcgNotifier struct {
	path      string
	attribute string
	level     int64

	// started receives the channel Start was given.
	started chan chan<- struct{}
	stopped chan struct{}

	mu    sync.Mutex
	stops int
}

func (s *stubMemcgNotifier) Start(ctx context.Context, ch chan<- struct{}) {
	s.started <- ch
	select {
	case <-s.stopped:
	case <-ctx.Done():
	}
}

func (s *stubMemcgNotifier) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stops == 0 {
		close(s.stopped)
	}
	s.stops++
}

func (s *stubMemcgNotifier) stopCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stops
}

// waitStarted returns the channel the notifier's Start was called with.
func (s *stubMemcgNotifier) waitStarted(t *testing.T) chan<- struct{} {
	t.Helper()
	select {
	case ch := <-s.started:
		return ch
	case <-time.After(5 * time.Second):
		t.Fatalf("Start of the notifier armed at %d was not called", s.level)
		return nil
	}
}

// stubMemcgFactory makes stubMemcgNotifiers, or fails with err when set.
type stubMemcgFactory struct {
	err  error
	made []*stubMemcgNotifier
}

func (f *stubMemcgFactory) NewCgroupNotifier(_ klog.Logger, path, attribute string, threshold int64) (CgroupNotifier, error) {
	if f.err != nil {
		return nil, f.err
	}
	n := &stubMemcgNotifier{
		path:      path,
		attribute: attribute,
		level:     threshold,
		started:   make(chan chan<- struct{}, 1),
		stopped:   make(chan struct{}),
	}
	f.made = append(f.made, n)
	return n, nil
}

func bytesPtr(v uint64) *uint64 { return &v }

// memStats builds memory stats from available, working set and usage bytes.
func memStats(available, workingSet, usage uint64) *statsapi.MemoryStats {
	return &statsapi.MemoryStats{
		AvailableBytes:  bytesPtr(available),
		WorkingSetBytes: bytesPtr(workingSet),
		UsageBytes:      bytesPtr(usage),
	}
}

// summaryWith returns a summary whose node has the given memory stats and,
// when pods is not nil, a pods system container with those.
func summaryWith(node, pods *statsapi.MemoryStats) *statsapi.Summary {
	s := &statsapi.Summary{Node: statsapi.NodeStats{Memory: node}}
	s.Node.SystemContainers = append(s.Node.SystemContainers, statsapi.ContainerStats{Name: statsapi.SystemContainerKubelet})
	if pods != nil {
		s.Node.SystemContainers = append(s.Node.SystemContainers, statsapi.ContainerStats{Name: statsapi.SystemContainerPods, Memory: pods})
	}
	return s
}

func memoryThreshold(signal evictionapi.Signal, grace time.Duration, value evictionapi.ThresholdValue) evictionapi.Threshold {
	return evictionapi.Threshold{Signal: signal, Operator: evictionapi.OpLessThan, Value: value, GracePeriod: grace}
}

func quantityValue(s string) evictionapi.ThresholdValue {
	q := resource.MustParse(s)
	return evictionapi.ThresholdValue{Quantity: &q}
}

func percentValue(p float32) evictionapi.ThresholdValue {
	return evictionapi.ThresholdValue{Percentage: p}
}

func TestMemoryThresholdNotifierArmedLevel(t *testing.T) {
	const dir = "/sys/fs/cgroup/memory/kubepods"
	cases := []struct {
		name      string
		threshold evictionapi.Threshold
		summary   *statsapi.Summary
		wantLevel int64
	}{
		{
			// capacity 4Gi, inactive file 1Gi: 4Gi - 1Gi + 1Gi
			name:      "node quantity",
			threshold: memoryThreshold(evictionapi.SignalMemoryAvailable, 0, quantityValue("1Gi")),
			summary:   summaryWith(memStats(3*gi, 1*gi, 2*gi), nil),
			wantLevel: 4 * gi,
		},
		{
			// capacity 10000, threshold 1000, inactive file 500
			name:      "node percentage",
			threshold: memoryThreshold(evictionapi.SignalMemoryAvailable, time.Minute, percentValue(0.1)),
			summary:   summaryWith(memStats(6000, 4000, 4500), nil),
			wantLevel: 9500,
		},
		{
			name:      "node without inactive file",
			threshold: memoryThreshold(evictionapi.SignalMemoryAvailable, 0, quantityValue("100Mi")),
			summary:   summaryWith(memStats(1*gi, 1*gi, 1*gi), nil),
			wantLevel: 2*gi - 100<<20,
		},
		{
			// The pods container's stats are used, not the node's:
			// capacity 2Gi, inactive 256Mi, threshold 512Mi.
			name:      "allocatable quantity",
			threshold: memoryThreshold(evictionapi.SignalAllocatableMemoryAvailable, 0, quantityValue("512Mi")),
			summary:   summaryWith(memStats(10*gi, 5*gi, 6*gi), memStats(1*gi, 1*gi, 1*gi+256<<20)),
			wantLevel: 2*gi - 512<<20 + 256<<20,
		},
		{
			// capacity 8000, 25% is 2000, inactive 1000
			name:      "allocatable percentage",
			threshold: memoryThreshold(evictionapi.SignalAllocatableMemoryAvailable, time.Second, percentValue(0.25)),
			summary:   summaryWith(memStats(1, 1, 1), memStats(5000, 3000, 4000)),
			wantLevel: 7000,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			factory := &stubMemcgFactory{}
			n := newMemcgThresholdNotifier(tc.threshold, dir, factory, func(string) {})
			if err := n.UpdateThreshold(ctx, tc.summary); err != nil {
				t.Fatalf("UpdateThreshold: %v", err)
			}
			if len(factory.made) != 1 {
				t.Fatalf("%d notifiers made, want 1", len(factory.made))
			}
			got := factory.made[0]
			if got.level != tc.wantLevel {
				t.Errorf("armed at %d, want %d", got.level, tc.wantLevel)
			}
			if got.path != dir || got.attribute != "memory.usage_in_bytes" {
				t.Errorf("armed on %s/%s, want %s/memory.usage_in_bytes", got.path, got.attribute, dir)
			}
			if ch := got.waitStarted(t); ch == nil {
				t.Error("Start was given a nil channel")
			}
		})
	}
}

func TestMemoryThresholdNotifierUpdateErrors(t *testing.T) {
	node := evictionapi.SignalMemoryAvailable
	allocatable := evictionapi.SignalAllocatableMemoryAvailable
	factoryErr := errors.New("no cgroup for you")
	cases := []struct {
		name       string
		signal     evictionapi.Signal
		summary    *statsapi.Summary
		factoryErr error
		wantErr    string
	}{
		{name: "nil summary", signal: node, summary: nil, wantErr: "summary"},
		{name: "node memory missing", signal: node, summary: summaryWith(nil, memStats(1, 1, 1)), wantErr: "no memory stats"},
		{name: "usage missing", signal: node, summary: summaryWith(&statsapi.MemoryStats{AvailableBytes: bytesPtr(1), WorkingSetBytes: bytesPtr(1)}, nil), wantErr: "lack"},
		{name: "working set missing", signal: node, summary: summaryWith(&statsapi.MemoryStats{AvailableBytes: bytesPtr(1), UsageBytes: bytesPtr(1)}, nil), wantErr: "lack"},
		{name: "available missing", signal: node, summary: summaryWith(&statsapi.MemoryStats{WorkingSetBytes: bytesPtr(1), UsageBytes: bytesPtr(1)}, nil), wantErr: "lack"},
		{name: "pods container missing", signal: allocatable, summary: summaryWith(memStats(1, 1, 1), nil), wantErr: `"pods"`},
		{name: "pods memory missing", signal: allocatable, summary: summaryWith(memStats(1, 1, 1), nil), wantErr: `"pods"`},
		{name: "pods usage missing", signal: allocatable, summary: summaryWith(memStats(1, 1, 1), &statsapi.MemoryStats{AvailableBytes: bytesPtr(1), WorkingSetBytes: bytesPtr(1)}), wantErr: "lack"},
		{name: "factory fails", signal: node, summary: summaryWith(memStats(1, 1, 1), nil), factoryErr: factoryErr, wantErr: factoryErr.Error()},
	}
	// A pods container present but without memory stats.
	cases[6].summary.Node.SystemContainers = append(cases[6].summary.Node.SystemContainers, statsapi.ContainerStats{Name: statsapi.SystemContainerPods})
	cases[6].wantErr = "no memory stats for the pods system container"

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			factory := &stubMemcgFactory{err: tc.factoryErr}
			n := newMemcgThresholdNotifier(memoryThreshold(tc.signal, 0, quantityValue("1Mi")), "/cg", factory, func(string) {})
			err := n.UpdateThreshold(ctx, tc.summary)
			if err == nil {
				t.Fatal("UpdateThreshold succeeded, want an error")
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %q does not mention %q", err, tc.wantErr)
			}
			if tc.factoryErr != nil && !errors.Is(err, tc.factoryErr) {
				t.Errorf("error %v does not wrap the factory's", err)
			}
			if tc.factoryErr == nil && len(factory.made) != 0 {
				t.Errorf("a notifier was armed despite the error")
			}
		})
	}
}

func TestMemoryThresholdNotifierRearm(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	factory := &stubMemcgFactory{}
	n := newMemcgThresholdNotifier(memoryThreshold(evictionapi.SignalMemoryAvailable, 0, quantityValue("1Gi")), "/cg", factory, func(string) {})

	if err := n.UpdateThreshold(ctx, summaryWith(memStats(3*gi, gi, gi), nil)); err != nil {
		t.Fatalf("first UpdateThreshold: %v", err)
	}
	if err := n.UpdateThreshold(ctx, summaryWith(memStats(2*gi, gi, gi), nil)); err != nil {
		t.Fatalf("second UpdateThreshold: %v", err)
	}
	if len(factory.made) != 2 {
		t.Fatalf("%d notifiers made, want 2", len(factory.made))
	}
	first, second := factory.made[0], factory.made[1]
	if first.level != 3*gi || second.level != 2*gi {
		t.Errorf("levels %d then %d, want %d then %d", first.level, second.level, 3*gi, 2*gi)
	}
	if first.stopCount() != 1 {
		t.Errorf("previous notifier stopped %d times, want 1", first.stopCount())
	}
	if second.stopCount() != 0 {
		t.Errorf("current notifier stopped %d times, want 0", second.stopCount())
	}
	// Both were started on the same channel, the one Start reads.
	if a, b := first.waitStarted(t), second.waitStarted(t); a != b {
		t.Error("re-armed notifier feeds a different channel")
	}

	// A failure to re-arm still disarms the stale notifier.
	factory.err = errors.New("boom")
	if err := n.UpdateThreshold(ctx, summaryWith(memStats(gi, gi, gi), nil)); err == nil {
		t.Fatal("UpdateThreshold succeeded with a failing factory")
	}
	if second.stopCount() != 1 {
		t.Errorf("stale notifier stopped %d times, want 1", second.stopCount())
	}
}

func TestMemoryThresholdNotifierCallsHandler(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	messages := make(chan string, 4)
	factory := &stubMemcgFactory{}
	threshold := memoryThreshold(evictionapi.SignalAllocatableMemoryAvailable, 0, quantityValue("1Gi"))
	n := newMemcgThresholdNotifier(threshold, "/cg", factory, func(m string) { messages <- m })

	startReturned := make(chan struct{})
	go func() {
		n.Start(ctx)
		close(startReturned)
	}()
	if err := n.UpdateThreshold(ctx, summaryWith(nil, memStats(3*gi, gi, gi))); err != nil {
		t.Fatalf("UpdateThreshold: %v", err)
	}
	armed := factory.made[0]
	events := armed.waitStarted(t)
	for i := 0; i < 2; i++ {
		select {
		case events <- struct{}{}:
		case <-time.After(5 * time.Second):
			t.Fatalf("event %d was not consumed", i)
		}
		select {
		case m := <-messages:
			if !strings.Contains(m, "hard allocatable memory eviction threshold") {
				t.Errorf("handler message %q does not name the threshold", m)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("handler not called for event %d", i)
		}
	}

	cancel()
	select {
	case <-startReturned:
	case <-time.After(5 * time.Second):
		t.Fatal("Start did not return after cancellation")
	}
	if armed.stopCount() != 1 {
		t.Errorf("armed notifier stopped %d times after cancellation, want 1", armed.stopCount())
	}
}

func TestMemoryThresholdNotifierDescription(t *testing.T) {
	cases := []struct {
		signal evictionapi.Signal
		grace  time.Duration
		want   string
	}{
		{evictionapi.SignalMemoryAvailable, 0, "hard memory eviction threshold"},
		{evictionapi.SignalMemoryAvailable, time.Minute, "soft memory eviction threshold"},
		{evictionapi.SignalAllocatableMemoryAvailable, 0, "hard allocatable memory eviction threshold"},
		{evictionapi.SignalAllocatableMemoryAvailable, time.Second, "soft allocatable memory eviction threshold"},
	}
	for _, tc := range cases {
		n := newMemcgThresholdNotifier(memoryThreshold(tc.signal, tc.grace, quantityValue("1Mi")), "/cg", &stubMemcgFactory{}, nil)
		if got := n.Description(); got != tc.want {
			t.Errorf("Description() of %s with grace %v = %q, want %q", tc.signal, tc.grace, got, tc.want)
		}
	}
}

func TestNewMemoryThresholdNotifierCgroupPath(t *testing.T) {
	mount, err := memoryControllerMount()
	if err != nil {
		cannotRun(t, "", "no memory cgroup controller on this host: %v", err)
	}
	logger, _ := ktesting.NewTestContext(t)
	cases := []struct {
		signal evictionapi.Signal
		want   string
	}{
		{evictionapi.SignalMemoryAvailable, mount},
		{evictionapi.SignalAllocatableMemoryAvailable, filepath.Join(mount, "kubepods")},
	}
	for _, tc := range cases {
		got, err := NewMemoryThresholdNotifier(logger, memoryThreshold(tc.signal, 0, quantityValue("1Mi")), "/kubepods", &stubMemcgFactory{}, func(string) {})
		if err != nil {
			t.Fatalf("NewMemoryThresholdNotifier(%s): %v", tc.signal, err)
		}
		if dir := got.(*memcgThresholdNotifier).cgroupDir; dir != tc.want {
			t.Errorf("%s notifier watches %s, want %s", tc.signal, dir, tc.want)
		}
	}
}

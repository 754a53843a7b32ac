package parity

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	testingclock "k8s.io/utils/clock/testing"
)

// harness is everything a manager talks to: the summary provider, GC, the
// kill function, the event recorder, the disk info provider, the active
// pods and the fake clock. The active pods function is the pass gate: each
// pass of the monitoring loop starts by asking for pods, and waits there
// until the driver lets it run.
type harness struct {
	ctx   context.Context
	clock *testingclock.FakeClock
	w     *world
	perm  []int

	atGate  chan struct{} // the loop is asking for pods
	proceed chan struct{} // the driver lets that pass run

	mu   sync.Mutex
	pass *Pass
	rec  *PassRecord
}

var errInjected = errors.New("injected failure")

// startTime is the fake clock's time before the first pass's gap.
var startTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func newHarness(ctx context.Context, s *Scenario, perm []int) *harness {
	return &harness{
		ctx:     ctx,
		clock:   testingclock.NewFakeClock(startTime),
		w:       newWorld(s),
		perm:    perm,
		atGate:  make(chan struct{}),
		proceed: make(chan struct{}),
	}
}

// activePods is the manager's ActivePodsFunc.
func (h *harness) activePods() []*v1.Pod {
	select {
	case h.atGate <- struct{}{}:
	case <-h.ctx.Done():
		return nil
	}
	select {
	case <-h.proceed:
	case <-h.ctx.Done():
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rec.gets = 0
	return h.w.alive(h.perm)
}

// Get is the summary provider's: the pass's first call may be made to
// fail; later calls in the pass (after node-level reclaim) see what GC
// freed.
func (h *harness) Get(ctx context.Context, _ bool) (*statsapi.Summary, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ctx.Err() != nil || h.pass == nil {
		return nil, errors.New("no pass is running")
	}
	h.rec.gets++
	if h.rec.gets == 1 && h.pass.SummaryFails {
		return nil, errInjected
	}
	return h.w.summary(h.pass, h.clock.Now()), nil
}

// GetCPUAndMemoryStats is not called by the eviction manager.
func (h *harness) GetCPUAndMemoryStats(ctx context.Context) (*statsapi.Summary, error) {
	return nil, errors.New("GetCPUAndMemoryStats is not part of the harness")
}

// gc records a GC call; unless the pass makes it fail (fails), what it
// can free (frees) is freed.
func (h *harness) gc(what string, fails func(*Pass) bool, frees func(*world) *FsUse) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rec.GC = append(h.rec.GC, what)
	if fails(h.pass) {
		return errInjected
	}
	*frees(h.w) = FsUse{}
	return nil
}

type imageGC struct{ *harness }

func (g imageGC) DeleteUnusedImages(context.Context) error {
	return g.gc("images", func(p *Pass) bool { return p.ImageGCFails }, func(w *world) *FsUse { return &w.images })
}

type containerGC struct{ *harness }

func (g containerGC) DeleteAllUnusedContainers(context.Context) error {
	return g.gc("containers", func(p *Pass) bool { return p.ContainerGCFails }, func(w *world) *FsUse { return &w.layers })
}

// kill is the manager's KillPodFunc: it records the kill with the status
// the manager asks for, and unless the pass makes kills fail, the pod is
// gone from then on.
func (h *harness) kill(pod *v1.Pod, isEvicted bool, grace *int64, status func(*v1.PodStatus)) error {
	st := v1.PodStatus{}
	if status != nil {
		status(&st)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	g := "nil"
	if grace != nil {
		g = fmt.Sprint(*grace)
	}
	// Which pod is killed is state; the grace period and the status are
	// not read back (upstream picks them from whichever of several met
	// thresholds of the resource sorts first).
	target := fmt.Sprintf("kill %s/%s", pod.Namespace, pod.Name)
	text := fmt.Sprintf("kill of %s/%s: evicted=%v grace=%s phase=%s reason=%q message=%q",
		pod.Namespace, pod.Name, isEvicted, g, st.Phase, st.Reason, st.Message)
	for _, c := range st.Conditions {
		text += fmt.Sprintf(" condition=%s/%s/%s/gen%d/%q", c.Type, c.Status, c.Reason, c.ObservedGeneration, c.Message)
	}
	h.rec.Statuses = append(h.rec.Statuses, text)
	if h.pass.KillFails {
		h.rec.Kills = append(h.rec.Kills, target+" -> failed")
		return errInjected
	}
	h.rec.Kills = append(h.rec.Kills, target)
	h.rec.evicted = true
	h.w.dead[pod.UID] = true
	return nil
}

// cleanedUp is the manager's PodCleanedUpFunc: killed pods are gone at
// the first look.
func (h *harness) cleanedUp(*v1.Pod) bool { return true }

// diskInfo is the manager's DiskInfoProvider.
type diskInfo Layout

func (d diskInfo) HasDedicatedImageFs(context.Context) (bool, error) { return d.DedicatedImageFs, nil }

func (d diskInfo) HasDedicatedContainerFs(context.Context) (bool, error) {
	return d.SplitContainerFs, nil
}

// The record.EventRecorder of the manager.

func (h *harness) Event(object runtime.Object, eventtype, reason, message string) {
	h.event(object, nil, eventtype, reason, message)
}

func (h *harness) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...interface{}) {
	h.event(object, nil, eventtype, reason, fmt.Sprintf(messageFmt, args...))
}

func (h *harness) AnnotatedEventf(object runtime.Object, annotations map[string]string, eventtype, reason, messageFmt string, args ...interface{}) {
	h.event(object, annotations, eventtype, reason, fmt.Sprintf(messageFmt, args...))
}

func (h *harness) event(object runtime.Object, annotations map[string]string, eventtype, reason, message string) {
	var who string
	switch o := object.(type) {
	case *v1.Pod:
		who = "pod " + o.Namespace + "/" + o.Name
	case *v1.ObjectReference:
		who = strings.ToLower(o.Kind) + " " + o.Name
	default:
		who = fmt.Sprintf("%T", object)
	}
	e := fmt.Sprintf("event %s %s %s %q", who, eventtype, reason, message)
	for _, k := range slices.Sorted(maps.Keys(annotations)) {
		e += fmt.Sprintf(" %s=%q", k, annotations[k])
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rec.Events = append(h.rec.Events, e)
}

// restTimeout bounds how long (real time) a pass may take to come to rest.
// Passes rest within milliseconds; the bound only ends a manager that never
// would, and is wide because a starved machine (a run at nice 19 beside a
// TCG VM) once took over 10 s to let a pass of seed 12469 reach the gate.
const restTimeout = 60 * time.Second

// start opens pass k's record and moves the clock by its gap.
func (h *harness) start(k int) {
	h.mu.Lock()
	h.pass, h.rec = &h.w.s.Passes[k], &PassRecord{}
	h.mu.Unlock()
	h.clock.Step(h.w.s.Passes[k].Gap)
}

// run lets the pass run and waits until the manager is at rest again:
// either asking for the next pass's pods, or waiting on the fake clock:
// for its monitoring interval (one timer), or, after a pass that killed a
// pod, for the pods to be cleaned up (a timeout and a poll ticker; the
// clock must not move before both exist, or the poll would never fire).
// It reports whether the loop arrived at the gate already.
func (h *harness) run(arrived bool) (atGate bool, err error) {
	deadline := time.After(restTimeout)
	if !arrived {
		select {
		case <-h.atGate:
		case <-deadline:
			return false, errors.New("the monitoring loop did not ask for pods")
		}
	}
	// The fake clock's tickers stay its waiters after Stop: count from
	// the waiters there are while the loop waits at the gate.
	base := h.clock.Waiters()
	select {
	case h.proceed <- struct{}{}:
	case <-deadline:
		return false, errors.New("the monitoring loop did not take the pass")
	}
	poll := time.NewTicker(100 * time.Microsecond)
	defer poll.Stop()
	for {
		select {
		case <-h.atGate:
			return true, nil
		case <-poll.C:
			if h.clock.Waiters() >= base+h.restingWaiters() {
				return false, nil
			}
		case <-deadline:
			return false, errors.New("the pass did not come to rest")
		}
	}
}

// restingWaiters is how many clock waiters a manager at rest has.
func (h *harness) restingWaiters() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.rec.evicted {
		return 2
	}
	return 1
}

// record closes the pass's record.
func (h *harness) record() *PassRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.rec
}

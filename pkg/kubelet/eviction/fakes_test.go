//evictkit:file wired

package eviction

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	testingclock "k8s.io/utils/clock/testing"

	"k8s.io/kubernetes/pkg/kubelet/server/stats"
)

// ---------------------------------------------------------------------------
// Summary provider

// fakeSummaryProvider hands out a settable summary. Once it has served
// switchAfter calls to Get, it serves next instead (when next is set), which
// lets a test make node-level reclaim "work" between two reads.
type fakeSummaryProvider struct {
	mu          sync.Mutex
	summary     *statsapi.Summary
	err         error
	next        *statsapi.Summary
	switchAfter int
	getCalls    int
	cpuMemCalls int
}

var _ stats.SummaryProvider = &fakeSummaryProvider{}

func (p *fakeSummaryProvider) Get(_ context.Context, _ bool) (*statsapi.Summary, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.getCalls++
	if p.err != nil {
		return nil, p.err
	}
	if p.next != nil && p.getCalls > p.switchAfter {
		p.summary, p.next = p.next, nil
	}
	return fakeCopySummary(p.summary), nil
}

func (p *fakeSummaryProvider) GetCPUAndMemoryStats(_ context.Context) (*statsapi.Summary, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cpuMemCalls++
	if p.err != nil {
		return nil, p.err
	}
	return fakeCopySummary(p.summary), nil
}

// fakeCopySummary deep-copies a summary through JSON (stats times keep
// whole-second precision, which is all the tests use).
func fakeCopySummary(s *statsapi.Summary) *statsapi.Summary {
	if s == nil {
		return nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	out := &statsapi.Summary{}
	if err := json.Unmarshal(b, out); err != nil {
		panic(err)
	}
	return out
}

func (p *fakeSummaryProvider) set(s *statsapi.Summary) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.summary = s
}

func (p *fakeSummaryProvider) setErr(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.err = err
}

// edit applies fn to the current summary under the provider's lock.
func (p *fakeSummaryProvider) edit(fn func(*statsapi.Summary)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fn(p.summary)
}

func (p *fakeSummaryProvider) calls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.getCalls
}

// ---------------------------------------------------------------------------
// Disk info provider

type fakeDiskInfo struct {
	mu             sync.Mutex
	imageFs        bool
	containerFs    bool
	imageFsErr     error
	containerFsErr error
	imageFsCalls   int
	containerCalls int
}

var _ DiskInfoProvider = &fakeDiskInfo{}

func (d *fakeDiskInfo) HasDedicatedImageFs(_ context.Context) (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.imageFsCalls++
	return d.imageFs, d.imageFsErr
}

func (d *fakeDiskInfo) HasDedicatedContainerFs(_ context.Context) (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.containerCalls++
	return d.containerFs, d.containerFsErr
}

// ---------------------------------------------------------------------------
// Garbage collectors

// fakeCallLog is shared by the collectors so that tests can check the
// order in which node-level reclaim ran.
type fakeCallLog struct {
	mu    sync.Mutex
	calls []string
}

func (l *fakeCallLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, s)
}

func (l *fakeCallLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.calls...)
}

func (l *fakeCallLog) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = nil
}

const (
	fakeCallImages     = "images"
	fakeCallContainers = "containers"
)

type fakeImageGC struct {
	log    *fakeCallLog
	err    error
	effect func()
}

var _ ImageGC = &fakeImageGC{}

func (g *fakeImageGC) DeleteUnusedImages(_ context.Context) error {
	g.log.add(fakeCallImages)
	if g.effect != nil {
		g.effect()
	}
	return g.err
}

type fakeContainerGC struct {
	log    *fakeCallLog
	err    error
	effect func()
}

var _ ContainerGC = &fakeContainerGC{}

func (g *fakeContainerGC) DeleteAllUnusedContainers(_ context.Context) error {
	g.log.add(fakeCallContainers)
	if g.effect != nil {
		g.effect()
	}
	return g.err
}

// ---------------------------------------------------------------------------
// Pod killer

// fakeKill is one call of the kill function. status is a fresh PodStatus
// with the manager's status function applied.
type fakeKill struct {
	pod       *v1.Pod
	isEvicted bool
	grace     *int64
	status    v1.PodStatus
}

type fakeKiller struct {
	mu    sync.Mutex
	kills []fakeKill
	err   error
}

func (k *fakeKiller) kill(pod *v1.Pod, isEvicted bool, grace *int64, fn func(*v1.PodStatus)) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	rec := fakeKill{pod: pod, isEvicted: isEvicted}
	if grace != nil {
		g := *grace
		rec.grace = &g
	}
	if fn != nil {
		fn(&rec.status)
	}
	k.kills = append(k.kills, rec)
	return k.err
}

func (k *fakeKiller) get() []fakeKill {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]fakeKill(nil), k.kills...)
}

func (k *fakeKiller) reset() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.kills = nil
}

// ---------------------------------------------------------------------------
// Event recorder

type fakeEvent struct {
	object      runtime.Object
	annotations map[string]string
	eventType   string
	reason      string
	message     string
}

type fakeRecorder struct {
	mu     sync.Mutex
	events []fakeEvent
}

var _ record.EventRecorder = &fakeRecorder{}

func (r *fakeRecorder) add(e fakeEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *fakeRecorder) Event(object runtime.Object, eventtype, reason, message string) {
	r.add(fakeEvent{object: object, eventType: eventtype, reason: reason, message: message})
}

func (r *fakeRecorder) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...interface{}) {
	r.add(fakeEvent{object: object, eventType: eventtype, reason: reason, message: fmt.Sprintf(messageFmt, args...)})
}

func (r *fakeRecorder) AnnotatedEventf(object runtime.Object, annotations map[string]string, eventtype, reason, messageFmt string, args ...interface{}) {
	var copied map[string]string
	if annotations != nil {
		copied = make(map[string]string, len(annotations))
		for k, v := range annotations {
			copied[k] = v
		}
	}
	r.add(fakeEvent{object: object, annotations: copied, eventType: eventtype, reason: reason, message: fmt.Sprintf(messageFmt, args...)})
}

func (r *fakeRecorder) get() []fakeEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]fakeEvent(nil), r.events...)
}

func (r *fakeRecorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = nil
}

// byReason returns the recorded events with the given reason.
func (r *fakeRecorder) byReason(reason string) []fakeEvent {
	var out []fakeEvent
	for _, e := range r.get() {
		if e.reason == reason {
			out = append(out, e)
		}
	}
	return out
}

// ---------------------------------------------------------------------------
// Harness

// mgrHarness wires a manager to fakes.
type mgrHarness struct {
	t        *testing.T
	m        *managerImpl
	clock    *testingclock.FakeClock
	summary  *fakeSummaryProvider
	disk     *fakeDiskInfo
	log      *fakeCallLog
	imageGC  *fakeImageGC
	contGC   *fakeContainerGC
	killer   *fakeKiller
	recorder *fakeRecorder
	nodeRef  *v1.ObjectReference
	pods     []*v1.Pod
}

var mgrEpoch = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

func mgrNewHarness(t *testing.T, cfg Config, localStorage bool, summary *statsapi.Summary) *mgrHarness {
	t.Helper()
	h := &mgrHarness{
		t:        t,
		clock:    testingclock.NewFakeClock(mgrEpoch),
		summary:  &fakeSummaryProvider{summary: summary},
		disk:     &fakeDiskInfo{},
		log:      &fakeCallLog{},
		killer:   &fakeKiller{},
		recorder: &fakeRecorder{},
		nodeRef:  &v1.ObjectReference{Kind: "Node", Name: "node-1", UID: "node-1", Namespace: ""},
	}
	h.imageGC = &fakeImageGC{log: h.log}
	h.contGC = &fakeContainerGC{log: h.log}
	mgr, admit := NewManager(h.summary, cfg, h.killer.kill, h.imageGC, h.contGC, h.recorder, h.nodeRef, h.clock, localStorage)
	m, ok := mgr.(*managerImpl)
	if !ok {
		t.Fatalf("NewManager returned %T, want *managerImpl", mgr)
	}
	if admit == nil {
		t.Fatalf("NewManager returned a nil admit handler")
	}
	h.m = m
	return h
}

func (h *mgrHarness) activePods() []*v1.Pod { return h.pods }

// sync runs one pass and fails the test on error.
func (h *mgrHarness) sync() []*v1.Pod {
	h.t.Helper()
	evicted, err := h.m.synchronize(context.Background(), h.disk, h.activePods)
	if err != nil {
		h.t.Fatalf("synchronize: unexpected error: %v", err)
	}
	return evicted
}

// syncLogging runs a pass like sync and also returns the messages it
// logged, in order.
func (h *mgrHarness) syncLogging() ([]*v1.Pod, []string) {
	h.t.Helper()
	logger := ktesting.NewLogger(h.t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	evicted, err := h.m.synchronize(klog.NewContext(context.Background(), logger), h.disk, h.activePods)
	if err != nil {
		h.t.Fatalf("synchronize: unexpected error: %v", err)
	}
	var messages []string
	for _, e := range logger.GetSink().(ktesting.Underlier).GetBuffer().Data() {
		messages = append(messages, e.Message)
	}
	return evicted, messages
}

// advance moves the fake clock and stamps every stats time in the current
// summary with the new time, as a fresh housekeeping would.
func (h *mgrHarness) advance(d time.Duration) {
	h.clock.Step(d)
	now := metav1.NewTime(h.clock.Now())
	h.summary.edit(func(s *statsapi.Summary) { fakeStampSummary(s, now) })
}

// killedNames returns the names of killed pods, in kill order.
func (h *mgrHarness) killedNames() []string {
	var out []string
	for _, k := range h.killer.get() {
		out = append(out, k.pod.Name)
	}
	return out
}

func (h *mgrHarness) reset() {
	h.killer.reset()
	h.recorder.reset()
	h.log.reset()
}

// ---------------------------------------------------------------------------
// Stats builders

// fakeNode describes the node part of a summary. Negative fields leave the
// corresponding stats out.
type fakeNode struct {
	memAvail, memWS         int64
	allocAvail, allocWS     int64
	nodeFsAvail, nodeFsCap  int64
	nodeFsFree, nodeFsTotal int64
	imgFsAvail, imgFsCap    int64
	imgFsFree, imgFsTotal   int64
	ctrFsAvail, ctrFsCap    int64
	ctrFsFree, ctrFsTotal   int64
	maxPID, procs           int64
}

// fakeHealthyNode has 8Gi memory, 100Gi disks, 1M inodes and 32k PIDs, all
// mostly free.
func fakeHealthyNode() fakeNode {
	return fakeNode{
		memAvail: 6 * gi, memWS: 2 * gi,
		allocAvail: 6 * gi, allocWS: 2 * gi,
		nodeFsAvail: 80 * gi, nodeFsCap: 100 * gi,
		nodeFsFree: 900000, nodeFsTotal: 1000000,
		imgFsAvail: 80 * gi, imgFsCap: 100 * gi,
		imgFsFree: 900000, imgFsTotal: 1000000,
		ctrFsAvail: 80 * gi, ctrFsCap: 100 * gi,
		ctrFsFree: 900000, ctrFsTotal: 1000000,
		maxPID: 32768, procs: 100,
	}
}

func fakeFs(avail, capacity, free, total int64, ts metav1.Time) *statsapi.FsStats {
	fs := &statsapi.FsStats{Time: ts}
	if avail >= 0 && capacity >= 0 {
		fs.AvailableBytes, fs.CapacityBytes = u64p(uint64(avail)), u64p(uint64(capacity))
		fs.UsedBytes = u64p(uint64(max(capacity-avail, 0)))
	}
	if free >= 0 && total >= 0 {
		fs.InodesFree, fs.Inodes = u64p(uint64(free)), u64p(uint64(total))
		fs.InodesUsed = u64p(uint64(max(total-free, 0)))
	}
	return fs
}

func fakeMem(avail, ws int64, ts metav1.Time) *statsapi.MemoryStats {
	if avail < 0 || ws < 0 {
		return nil
	}
	return &statsapi.MemoryStats{Time: ts, AvailableBytes: u64p(uint64(avail)), WorkingSetBytes: u64p(uint64(ws)), UsageBytes: u64p(uint64(ws))}
}

// summary builds the node part of a summary, stamped at ts.
func (n fakeNode) summary(ts time.Time, pods ...statsapi.PodStats) *statsapi.Summary {
	mt := metav1.NewTime(ts)
	s := &statsapi.Summary{
		Node: statsapi.NodeStats{
			NodeName: "node-1",
			Memory:   fakeMem(n.memAvail, n.memWS, mt),
			Fs:       fakeFs(n.nodeFsAvail, n.nodeFsCap, n.nodeFsFree, n.nodeFsTotal, mt),
			Runtime: &statsapi.RuntimeStats{
				ImageFs:     fakeFs(n.imgFsAvail, n.imgFsCap, n.imgFsFree, n.imgFsTotal, mt),
				ContainerFs: fakeFs(n.ctrFsAvail, n.ctrFsCap, n.ctrFsFree, n.ctrFsTotal, mt),
			},
		},
		Pods: pods,
	}
	if m := fakeMem(n.allocAvail, n.allocWS, mt); m != nil {
		s.Node.SystemContainers = append(s.Node.SystemContainers, statsapi.ContainerStats{Name: statsapi.SystemContainerPods, Memory: m})
	}
	if n.maxPID >= 0 && n.procs >= 0 {
		s.Node.Rlimit = &statsapi.RlimitStats{Time: mt, MaxPID: i64p(n.maxPID), NumOfRunningProcesses: i64p(n.procs)}
	}
	return s
}

// fakeStampSummary sets every node-level stats time in s to ts.
func fakeStampSummary(s *statsapi.Summary, ts metav1.Time) {
	if s == nil {
		return
	}
	n := &s.Node
	if n.Memory != nil {
		n.Memory.Time = ts
	}
	for i := range n.SystemContainers {
		if n.SystemContainers[i].Memory != nil {
			n.SystemContainers[i].Memory.Time = ts
		}
	}
	if n.Fs != nil {
		n.Fs.Time = ts
	}
	if n.Runtime != nil {
		if n.Runtime.ImageFs != nil {
			n.Runtime.ImageFs.Time = ts
		}
		if n.Runtime.ContainerFs != nil {
			n.Runtime.ContainerFs.Time = ts
		}
	}
	if n.Rlimit != nil {
		n.Rlimit.Time = ts
	}
}

// fakePodUsage describes a pod's stats, per container in the order of the
// pod's containers (named c<i> past the pod's last).
type fakePodUsage struct {
	memWS   []int64 // per container working set
	rootfs  []int64 // per container writable layer bytes
	logs    []int64 // per container log bytes
	volumes map[string]int64
	procs   int64
	ephem   int64 // pod total ephemeral usage; <0 leaves it out
}

func fakePodStats(pod *v1.Pod, u fakePodUsage) statsapi.PodStats {
	ps := statsapi.PodStats{
		PodRef: statsapi.PodReference{Name: pod.Name, Namespace: pod.Namespace, UID: string(pod.UID)},
	}
	n := max(len(u.memWS), len(u.rootfs), len(u.logs))
	var total int64
	for i := 0; i < n; i++ {
		cs := statsapi.ContainerStats{Name: fmt.Sprintf("c%d", i)}
		if i < len(pod.Spec.Containers) {
			cs.Name = pod.Spec.Containers[i].Name
		}
		if i < len(u.memWS) {
			cs.Memory = &statsapi.MemoryStats{WorkingSetBytes: u64p(uint64(u.memWS[i]))}
			total += u.memWS[i]
		}
		if i < len(u.rootfs) {
			cs.Rootfs = &statsapi.FsStats{UsedBytes: u64p(uint64(u.rootfs[i])), InodesUsed: u64p(uint64(u.rootfs[i] / mi))}
		}
		if i < len(u.logs) {
			cs.Logs = &statsapi.FsStats{UsedBytes: u64p(uint64(u.logs[i])), InodesUsed: u64p(1)}
		}
		ps.Containers = append(ps.Containers, cs)
	}
	if len(u.memWS) > 0 {
		ps.Memory = &statsapi.MemoryStats{WorkingSetBytes: u64p(uint64(total))}
	}
	for name, used := range u.volumes {
		ps.VolumeStats = append(ps.VolumeStats, statsapi.VolumeStats{Name: name, FsStats: statsapi.FsStats{UsedBytes: u64p(uint64(used)), InodesUsed: u64p(1)}})
	}
	if u.ephem >= 0 {
		ps.EphemeralStorage = &statsapi.FsStats{UsedBytes: u64p(uint64(u.ephem))}
	}
	ps.ProcessStats = &statsapi.ProcessStats{ProcessCount: u64p(uint64(u.procs))}
	return ps
}

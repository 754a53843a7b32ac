//evictkit:file EvictionCgroupV2Notifier
//go:build linux

package eviction

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// The cgroup v2 notifier on a real cgroup v2 kernel (the VM of make
// test-cgroupv2): its PSI trigger on a cgroup's memory.pressure and its
// memory.events watch, each fired by what a process in the cgroup does,
// and the manager woken by them. Each logs how long the notification
// took; under the VM's emulation every bound is generous.

// podCgroupOf returns a test cgroup as the manager names the pods' cgroup:
// relative to the hierarchy's root, with a leading slash.
func podCgroupOf(cg *testCgroup) string {
	return "/" + strings.TrimPrefix(cg.dir, cg.mount+"/")
}

// lowPressureTrigger is a trigger any writer may arm (2.5 % of a 2 s
// window) and a thrashing cgroup crosses within seconds: the mechanism is
// under test, not the level.
func lowPressureTrigger(t *testing.T) string {
	saved := pressureTriggers
	pressureTriggers = []string{"some 50000 2000000"}
	t.Cleanup(func() { pressureTriggers = saved })
	return pressureTriggers[0]
}

func TestPressureTriggerFiresOnCgroupV2(t *testing.T) {
	cg := newTestCgroup(t, "v2")
	trigger := lowPressureTrigger(t)
	n := newPressureNotifier(hard(sigAlloc, "500Mi"), cg.mount, podCgroupOf(cg), nil)
	pressure := filepath.Join(cg.dir, "memory.pressure")
	if n.pressureFile != pressure || n.eventsFile != filepath.Join(cg.dir, "memory.events") {
		t.Fatalf("the pods' notifier watches %s and %s, want %s and its memory.events", n.pressureFile, n.eventsFile, pressure)
	}
	// The thrash makes memory.events change too; here only the trigger
	// may answer.
	n.eventsFile = ""
	elapsed := thrashUntilNotified(t, cg, n, "memory stall (PSI trigger "+trigger+" on "+pressure+")")
	t.Logf("notified %s after the thrasher started", elapsed.Round(time.Millisecond))

	// The cgroup's own pressure file reads as a pressure file, with the
	// stall counted.
	content, err := os.ReadFile(pressure)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := parsePressureFile(content); err != nil {
		t.Fatalf("%s: %v\n%s", pressure, err, content)
	}
	if stalled := pressureTotal(t, string(content), "some"); stalled == 0 {
		t.Errorf("%s counts no stall after the thrash:\n%s", pressure, content)
	}
}

// memory.events, fired by the kernel: a hog touches twice its cgroup's
// memory.max, the kernel reclaims, finds nothing, and kills it.
func TestPressureNotifierMemoryEventsOnCgroupV2(t *testing.T) {
	cg := newTestCgroup(t, "v2")
	cg.limit(t, 32<<20)
	n := newPressureNotifier(hard(sigAlloc, "500Mi"), cg.mount, podCgroupOf(cg), nil)
	msgs, done, cancel := startArmed(t, n)
	start := time.Now()
	hog := startChild(t, cg.dir, "memory-hog", hogBytesEnv+"=67108864")
	expectMessage(t, msgs, time.Minute, filepath.Join(cg.dir, "memory.events")+" changed")
	t.Logf("notified %s after the hog started", time.Since(start).Round(time.Millisecond))
	select {
	case <-hog.exited:
	case <-time.After(time.Minute):
		t.Fatal("the hog, twice its cgroup's memory.max, was not killed within a minute")
	}
	if oom := cgroupKeyed(t, cg.dir, "memory.events", "oom_kill"); oom < 1 {
		t.Errorf("memory.events counts %d OOM kills, want the hog's", oom)
	}
	cancel()
	expectStopped(t, done)
}

// pressureTotal is the total= field of a pressure file's "some" or "full" line.
func pressureTotal(t *testing.T, content, kind string) int64 {
	t.Helper()
	for _, line := range strings.Split(content, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || fields[0] != kind {
			continue
		}
		for _, f := range fields[1:] {
			if v, ok := strings.CutPrefix(f, "total="); ok {
				return parseInt64(t, v)
			}
		}
	}
	t.Fatalf("no %s total in %q", kind, content)
	return 0
}

func parseInt64(t *testing.T, s string) int64 {
	t.Helper()
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The manager end to end: with EvictionCgroupV2Notifier on, the kernel's
// notification about the pods' cgroup wakes a pass long before the
// monitoring loop (an hour here) would run one. The monitoring pass at
// the start sees healthy figures; the pass the notification wakes sees
// the pods over the threshold, evicts and says it was that pass.
func TestCgroupV2NotifierWakesTheManager(t *testing.T) {
	cg := newTestCgroup(t, "v2")
	lowPressureTrigger(t)
	setGateDuringTest(t, evictionCgroupV2Notifier, true)
	cfg := Config{
		Thresholds:               []evictionapi.Threshold{hard(sigAlloc, "1Mi")},
		KernelMemcgNotification:  true,
		PodCgroupRoot:            podCgroupOf(cg),
		PressureTransitionPeriod: time.Minute,
	}
	pods, st := mgrMemoryPods()
	pressure := fakeHealthyNode()
	pressure.allocAvail = 0
	h := mgrNewHarness(t, cfg, false, fakeHealthyNode().summary(mgrEpoch))
	h.pods = pods
	// Taken later than the first pass's: a pass acts only on stats newer
	// than those it last saw.
	h.summary.next, h.summary.switchAfter = pressure.summary(mgrEpoch.Add(time.Second), st...), 1
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	defer cancel()
	h.m.Start(ctx, h.disk, h.activePods, func(*v1.Pod) bool { return true }, time.Hour)
	waitFor(t, 30*time.Second, "the first monitoring pass", func() bool { return h.summary.calls() >= 1 })
	before := h.summary.calls()

	start := startThrasher(t, cg)
	waitFor(t, time.Minute, "a pass woken by the notifier", func() bool { return h.summary.calls() > before })
	t.Logf("a pass %s after the thrasher started (monitoring interval 1h)", time.Since(start).Round(time.Millisecond))
	// The thrasher goes on notifying and the fake stats do not change, so
	// later passes evict again: the first eviction is the one that counts.
	waitFor(t, time.Minute, "eviction", func() bool { return len(h.killer.get()) >= 1 })
	if got := h.killedNames(); got[0] != "besteffort" {
		t.Fatalf("evicted %v, want besteffort first", got)
	}
	waitFor(t, 10*time.Second, "log line of the notification pass's eviction", func() bool {
		for _, e := range logger.GetSink().(ktesting.Underlier).GetBuffer().Data() {
			if e.Message == "Eviction manager: pods evicted by the pass a notification woke" && strings.Contains(fmt.Sprint(e.ParameterKVList), "ns/besteffort") {
				return true
			}
		}
		return false
	})
}

// waitFor polls cond every 10 ms until it holds, failing after within.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %s", what, within)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

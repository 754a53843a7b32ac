//evictkit:file EvictionPSI

package eviction

import (
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// What EvictionPSI adds to the scenarios: a PSI threshold line, met above
// its share (threshold memory.psi.full.avg10>20), written back the same
// way, and an observation of a stall share (observe
// memory.psi.full.avg10=35.5%).
var _ = addScenarioFeature(scenarioFeature{
	readThreshold: func(arg string) (evictionapi.Threshold, bool, error) {
		signal, value, ok := strings.Cut(arg, ">")
		if !ok {
			return evictionapi.Threshold{}, false, nil
		}
		v, err := parsePSIThresholdValue(value)
		if err != nil {
			return evictionapi.Threshold{}, true, err
		}
		return evictionapi.Threshold{Signal: parseSignal(signal), Operator: opGreaterThan, Value: v}, true, nil
	},
	writeThreshold: func(t evictionapi.Threshold) (string, bool) {
		if t.Operator != opGreaterThan {
			return "", false
		}
		return string(t.Signal) + ">" + formatPSI(t.Value.Quantity.MilliValue()), true
	},
	readFigures: func(figures string) (string, error) {
		pct, ok := strings.CutSuffix(figures, "%")
		if !ok {
			return figures, nil
		}
		f, err := strconv.ParseFloat(pct, 64)
		if err != nil {
			return "", fmt.Errorf("%q: want a stall share in percent", figures)
		}
		ob := psiObservation(f, time.Time{})
		return fmt.Sprintf("%d/%d", ob.available, ob.capacity), nil
	},
})

// The PSI signals starve memory (TestDecideReclaimStepsPerLayout).
var _ = addSignalResources(map[evictionapi.Signal]v1.ResourceName{signalMemoryPSISome: v1.ResourceMemory, signalMemoryPSIFull: v1.ResourceMemory})

func TestParsePSIThresholdValue(t *testing.T) {
	for _, tc := range []struct {
		in      string
		milli   int64
		wantErr string
	}{
		{in: "10", milli: 10000},
		{in: "12.5%", milli: 12500},
		{in: " 0.25 ", milli: 250},
		{in: "99.9", milli: 99900},
		{in: "0", wantErr: "above 0 and below 100"},
		{in: "100%", wantErr: "above 0 and below 100"},
		{in: "-5", wantErr: "above 0 and below 100"},
		{in: "lots", wantErr: "want a share of stalled time in percent"},
		{in: "NaN", wantErr: "want a share of stalled time in percent"},
		{in: "Inf", wantErr: "want a share of stalled time in percent"},
		{in: "", wantErr: "want a share of stalled time in percent"},
	} {
		v, err := parsePSIThresholdValue(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: error %v, want one with %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || v.Quantity == nil || v.Quantity.MilliValue() != tc.milli {
			t.Errorf("%q: %+v, %v; want %d milli-percent", tc.in, v, err, tc.milli)
		}
	}
}

func TestParseThresholdConfigPSI(t *testing.T) {
	t.Run("gate off: the signals are refused, naming the gate", func(t *testing.T) {
		setGateDuringTest(t, evictionPSI, false)
		_, err := ParseThresholdConfig(nil, map[string]string{"memory.psi.some.avg10": "10"}, nil, nil, nil)
		if err == nil || err.Error() != `evictionHard["memory.psi.some.avg10"]: eviction signal memory.psi.some.avg10 needs the EvictionPSI feature gate` {
			t.Errorf("error %v", err)
		}
	})
	setGateDuringTest(t, evictionPSI, true)
	t.Run("hard and soft", func(t *testing.T) {
		got, err := ParseThresholdConfig(nil,
			map[string]string{"memory.psi.full.avg10": "20", "memory.available": "100Mi"},
			map[string]string{"memory.psi.some.avg10": "12.5%"},
			map[string]string{"memory.psi.some.avg10": "30s"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 {
			t.Fatalf("thresholds %v, want 3", describeAll(got))
		}
		full, some := got[1], got[2]
		if got[0].Signal != evictionapi.SignalMemoryAvailable || full.Signal != signalMemoryPSIFull || some.Signal != signalMemoryPSISome {
			t.Errorf("order %v, want memory.available, then the PSI ones", describeAll(got))
		}
		if full.Operator != opGreaterThan || full.Value.Quantity.MilliValue() != 20000 || full.GracePeriod != 0 {
			t.Errorf("hard PSI threshold %+v", full)
		}
		if some.Operator != opGreaterThan || some.Value.Quantity.MilliValue() != 12500 || some.GracePeriod != 30*time.Second {
			t.Errorf("soft PSI threshold %+v", some)
		}
	})
	for _, tc := range []struct {
		name                string
		hard, soft, reclaim map[string]string
		want                string
	}{
		{name: "value out of range", hard: map[string]string{"memory.psi.full.avg10": "150"},
			want: `evictionHard["memory.psi.full.avg10"]="150": a share of stalled time must be above 0 and below 100 percent`},
		{name: "not a number", soft: map[string]string{"memory.psi.some.avg10": "high"},
			want: `evictionSoft["memory.psi.some.avg10"]="high": want a share of stalled time in percent, such as 10 or 12.5%`},
		{name: "minimum reclaim", hard: map[string]string{"memory.psi.full.avg10": "20"}, reclaim: map[string]string{"memory.psi.full.avg10": "5"},
			want: `evictionMinimumReclaim["memory.psi.full.avg10"]="5": a pressure stall signal has no minimum reclaim`},
		{name: "unknown pressure signal", hard: map[string]string{"io.psi.some.avg10": "20"},
			want: `evictionHard["io.psi.some.avg10"]: unsupported eviction signal io.psi.some.avg10`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			grace := map[string]string{}
			for k := range tc.soft {
				grace[k] = "1m"
			}
			_, err := ParseThresholdConfig(nil, tc.hard, tc.soft, grace, tc.reclaim)
			if err == nil || err.Error() != tc.want {
				t.Errorf("error %v, want %s", err, tc.want)
			}
		})
	}
}

func TestParsePressureFile(t *testing.T) {
	for _, tc := range []struct {
		name, in   string
		some, full float64
		wantErr    string
	}{
		{name: "kernel format", in: "some avg10=1.53 avg60=0.87 avg300=0.29 total=20390431\nfull avg10=0.07 avg60=0.13 avg300=0.05 total=5310237\n", some: 1.53, full: 0.07},
		{name: "no full line", in: "some avg10=42.00 avg60=0.00 avg300=0.00 total=1\n", some: 42},
		{name: "empty", in: "", wantErr: `no "some" line`},
		{name: "another file", in: "MemTotal: 1 kB\n", wantErr: `unexpected line "MemTotal: 1 kB"`},
		{name: "bad value", in: "some avg10=x avg60=0 avg300=0 total=0\n", wantErr: `avg10="x" is not a percentage`},
		{name: "a full stall is 100", in: "some avg10=100.00 avg60=99.50 avg300=90.00 total=9\nfull avg10=100.00 avg60=0 avg300=0 total=9\n", some: 100, full: 100},
		{name: "above 100", in: "some avg10=101.00 total=0\n", wantErr: `avg10="101.00" is not a percentage`},
		{name: "no avg10", in: "some avg60=1.00 total=0\n", wantErr: "no avg10 field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			some, full, err := parsePressureFile([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || some != tc.some || full != tc.full {
				t.Fatalf("= %v, %v, %v; want %v, %v", some, full, err, tc.some, tc.full)
			}
		})
	}
}

func TestManagerPSI(t *testing.T) {
	setGateDuringTest(t, evictionPSI, true)
	cfg := mgrMemoryConfig()
	thresholds, err := ParseThresholdConfig(nil, map[string]string{"memory.psi.some.avg10": "10"}, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Thresholds = thresholds
	pods, st := mgrMemoryPods()
	newHarness := func(summary *statsapi.Summary, file string, fileErr error) *mgrHarness {
		h := mgrNewHarness(t, cfg, false, summary)
		h.pods = pods
		h.m.readPressure = func() ([]byte, error) { return []byte(file), fileErr }
		return h
	}
	const stalled = "some avg10=30.00 avg60=5.00 avg300=1.00 total=100\nfull avg10=2.00 avg60=0.00 avg300=0.00 total=10\n"
	const calm = "some avg10=0.00 avg60=0.00 avg300=0.00 total=100\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=10\n"

	t.Run("from the pressure file", func(t *testing.T) {
		h := newHarness(fakeHealthyNode().summary(mgrEpoch, st...), stalled, nil)
		if !h.m.alpha[evictionPSI] {
			t.Fatal("psi off with the gate on and a PSI threshold")
		}
		before := mgrEvictionCount(t, string(signalMemoryPSISome))
		if got := podNames(h.sync()); !reflect.DeepEqual(got, []string{"besteffort"}) {
			t.Fatalf("evicted %v, want [besteffort]", got)
		}
		if !h.m.IsUnderMemoryPressure() || mgrAdmit(h, pod("new")).Admit {
			t.Error("want MemoryPressure and BestEffort pods rejected")
		}
		if d := mgrEvictionCount(t, string(signalMemoryPSISome)) - before; d != 1 {
			t.Errorf("kubelet_evictions{memory.psi.some.avg10} delta %v, want 1", d)
		}
		if k := h.killer.get()[0]; !strings.HasPrefix(k.status.Message, "The node was under memory pressure: memory.psi.some.avg10 was 30%, threshold 10%.") {
			t.Errorf("status message %q", k.status.Message)
		}
	})
	t.Run("the Summary API's figures win over the file", func(t *testing.T) {
		s := fakeHealthyNode().summary(mgrEpoch, st...)
		s.Node.Memory.PSI = &statsapi.PSIStats{Some: statsapi.PSIData{Avg10: 50, Total: 9000}}
		h := newHarness(s, calm, nil)
		if got := podNames(h.sync()); !reflect.DeepEqual(got, []string{"besteffort"}) {
			t.Errorf("evicted %v, want [besteffort] on the summary's 50%%", got)
		}
		s2 := fakeHealthyNode().summary(mgrEpoch, st...)
		s2.Node.Memory.PSI = &statsapi.PSIStats{Some: statsapi.PSIData{Total: 4000}, Full: statsapi.PSIData{Total: 1000}}
		h2 := newHarness(s2, stalled, nil)
		if got := h2.sync(); got != nil {
			t.Errorf("evicted %v on the file's 30%% though the summary says 0", podNames(got))
		}
	})
	t.Run("a summary of zeros, totals too, is not measured: the file's figures count", func(t *testing.T) {
		s := fakeHealthyNode().summary(mgrEpoch, st...)
		s.Node.Memory.PSI = &statsapi.PSIStats{}
		h := newHarness(s, stalled, nil)
		if got := podNames(h.sync()); !reflect.DeepEqual(got, []string{"besteffort"}) {
			t.Errorf("evicted %v, want [besteffort] on the file's 30%% (cgroup v1: cAdvisor's PSI is all zeros)", got)
		}
	})
	t.Run("calm", func(t *testing.T) {
		h := newHarness(fakeHealthyNode().summary(mgrEpoch, st...), calm, nil)
		if got := h.sync(); got != nil || h.m.IsUnderMemoryPressure() {
			t.Errorf("evicted %v (pressure %v) at 0%%", podNames(got), h.m.IsUnderMemoryPressure())
		}
	})
	t.Run("unreadable pressure file: no figures, no eviction", func(t *testing.T) {
		h := newHarness(fakeHealthyNode().summary(mgrEpoch, st...), "", errors.New("no such file"))
		if got := h.sync(); got != nil {
			t.Errorf("evicted %v without figures", podNames(got))
		}
		h2 := newHarness(fakeHealthyNode().summary(mgrEpoch, st...), "garbage\n", nil)
		if got := h2.sync(); got != nil {
			t.Errorf("evicted %v on a garbled file", podNames(got))
		}
	})
	t.Run("gate off: no PSI read", func(t *testing.T) {
		setGateDuringTest(t, evictionPSI, false)
		h := mgrNewHarness(t, mgrMemoryConfig(), false, fakeHealthyNode().summary(mgrEpoch, st...))
		if h.m.alpha[evictionPSI] {
			t.Error("psi on with the gate off")
		}
	})
}

// After an eviction for a PSI threshold, the 10-second average lags the
// relief: for psiSettle no PSI threshold drives another eviction (the
// condition stays), then none while the signal keeps falling, then one may
// again: when it stops falling, or after psiSettleMax.
func TestManagerPSISettles(t *testing.T) {
	setGateDuringTest(t, evictionPSI, true)
	cfg := mgrMemoryConfig()
	var err error
	if cfg.Thresholds, err = ParseThresholdConfig(nil, map[string]string{"memory.psi.some.avg10": "10"}, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	pods, st := mgrMemoryPods()
	h := mgrNewHarness(t, cfg, false, fakeHealthyNode().summary(mgrEpoch, st...))
	h.pods = pods
	share := "50.00"
	h.m.readPressure = func() ([]byte, error) { return []byte("some avg10=" + share + " avg60=0 avg300=0 total=1\n"), nil }
	if got := podNames(h.sync()); !reflect.DeepEqual(got, []string{"besteffort"}) {
		t.Fatalf("first pass evicted %v, want [besteffort]", got)
	}
	h.pods = pods[:2]
	for _, step := range []struct {
		after time.Duration
		share string
		evict bool
		why   string
	}{
		{time.Second, "48.00", false, "within psiSettle"},
		{psiSettle - 2*time.Second, "60.00", false, "within psiSettle, even rising"},
		{time.Second, "30.00", false, "falling after psiSettle"},
		{10 * time.Second, "18.00", false, "still falling"},
		{10 * time.Second, "18.00", true, "stopped falling"},
	} {
		h.advance(step.after)
		share = step.share
		got := h.sync()
		if (got != nil) != step.evict {
			t.Fatalf("%s (%s%%): evicted %v, want eviction %v", step.why, step.share, podNames(got), step.evict)
		}
		if !h.m.IsUnderMemoryPressure() {
			t.Fatalf("%s: MemoryPressure dropped", step.why)
		}
	}
	if got := h.killedNames(); !reflect.DeepEqual(got, []string{"besteffort", "burstable"}) {
		t.Errorf("killed %v, want [besteffort burstable]", got)
	}

	t.Run("after psiSettleMax a falling signal evicts too", func(t *testing.T) {
		last := psiObservation(40, t0)
		if !psiSettling(psiSettleMax-time.Second, &last, psiObservation(30, t0)) {
			t.Error("not held while falling before psiSettleMax")
		}
		if psiSettling(psiSettleMax, &last, psiObservation(30, t0)) {
			t.Error("held at psiSettleMax")
		}
		if psiSettling(psiSettle, nil, psiObservation(30, t0)) {
			t.Error("held past psiSettle with no earlier figure to compare")
		}
	})
}

// The kernel's own file parses (where the kernel has PSI).
func TestReadProcPressureMemory(t *testing.T) {
	content, err := readProcPressureMemory()
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.EOPNOTSUPP) {
		cannotRun(t, "", "this kernel has no memory PSI: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := parsePressureFile(content); err != nil {
		t.Errorf("%s: %v\n%s", procPressureMemory, err, content)
	}
}

func TestDescribePSIThreshold(t *testing.T) {
	v, _ := parsePSIThresholdValue("20")
	th := evictionapi.Threshold{Signal: signalMemoryPSIFull, Operator: opGreaterThan, Value: v}
	if got := describeThreshold(th); got != "hard memory.psi.full.avg10>20" {
		t.Errorf("describeThreshold = %q, want the greater-than operator", got)
	}
}

func TestAdvanceRecordsPSIEvictions(t *testing.T) {
	evicted := []*v1.Pod{pod("a")}
	at := t0.Add(time.Minute)
	for _, tc := range []struct {
		name string
		o    outcome
		want time.Time
	}{
		{"a PSI eviction", outcome{signal: signalMemoryPSIFull, evicted: evicted, at: at}, at},
		{"a PSI threshold that evicted nothing", outcome{signal: signalMemoryPSIFull, at: at}, time.Time{}},
		{"a memory.available eviction", outcome{signal: sigMem, evicted: evicted, at: at}, time.Time{}},
	} {
		if got := newDecisionState(1).advance(tc.o).settleFrom; !got.Equal(tc.want) {
			t.Errorf("%s: settleFrom %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A stall share says nothing of how much memory to free: a PSI threshold
// evicts one pod per pass even with EvictionReclaimSized on.
func TestPSIEvictsOnePodPerPassWhenSized(t *testing.T) {
	v, err := parsePSIThresholdValue("20")
	if err != nil {
		t.Fatal(err)
	}
	pods := []*v1.Pod{pod("a"), pod("b"), pod("c")}
	in := memoryInput(0, pods, podStats("a", withWorkingSet("300Mi")), podStats("b", withWorkingSet("200Mi")), podStats("c", withWorkingSet("100Mi")))
	in.thresholds = []evictionapi.Threshold{{Signal: signalMemoryPSIFull, Operator: opGreaterThan, Value: v}}
	in.obs = observations()
	in.obs.set(signalMemoryPSIFull, psiObservation(60, t0))
	in.gates.set(evictionReclaimSized, true)
	d := decide(in)
	if d.target == nil {
		t.Fatal("a 60% stall over a 20% threshold gave no target")
	}
	if got := victimNames(d.target.victims); !reflect.DeepEqual(got, []string{"a"}) {
		t.Errorf("victims %v, want [a]: one pod per pass", got)
	}
}

package benche2e

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

func result(scenario, kubelet string, latency, relief time.Duration, evicted, oom, needed int) Result {
	r := Result{Scenario: scenario, Kubelet: kubelet, Crossed: t0, Evicted: evicted, OOMKilled: oom, Needed: needed, TakenAtKill: 700}
	if latency >= 0 {
		r.KillCall = t0.Add(latency)
		r.FirstKill = r.KillCall.Add(500 * time.Millisecond)
	}
	if relief >= 0 && latency >= 0 {
		r.Recovered = r.FirstKill.Add(relief)
	}
	return r
}

func TestSummarize(t *testing.T) {
	results := []Result{
		result("latency-200Mi", "evictkit", 40*time.Millisecond, time.Second, 1, 0, 1),
		result("latency-200Mi", "evictkit", 60*time.Millisecond, time.Second, 1, 0, 1),
		result("latency-200Mi", "evictkit", 80*time.Millisecond, time.Second, 1, 0, 1),
		result("latency-200Mi", "upstream", 8*time.Second, time.Second, 1, 0, 1),
		result("latency-200Mi", "upstream", 12*time.Second, time.Second, 1, 0, 1),
		{Scenario: "latency-200Mi", Kubelet: "upstream", Error: "the node did not settle"},
		result("oom", "evictkit", 50*time.Millisecond, time.Second, 1, 0, 1),
		result("oom", "upstream", -1, -1, 0, 1, 1),
		result("relief-k3", "evictkit", 0, 1500*time.Millisecond, 3, 0, 3),
		result("relief-k3", "upstream", 0, 25*time.Second, 4, 0, 3),
	}
	sums := Summarize(results)
	if len(sums) != 3 || sums[0].Scenario != "latency-200Mi" || sums[1].Scenario != "oom" || sums[2].Scenario != "relief-k3" {
		t.Fatalf("summaries for %v, want latency-200Mi, oom, relief-k3 in scenario order", names(sums))
	}
	l := sums[0]
	if l.Ours.Runs != 3 || l.Upstream.Runs != 3 || l.Upstream.Failed != 1 {
		t.Errorf("runs %d/%d failed %d, want 3/3 with 1 failed", l.Ours.Runs, l.Upstream.Runs, l.Upstream.Failed)
	}
	if m := Median(l.Ours.Latencies); m != 60 {
		t.Errorf("our median latency %v, want 60", m)
	}
	if m := Median(l.Upstream.Latencies); m != 10000 {
		t.Errorf("upstream median latency %v, want 10000 (of 8000 and 12000)", m)
	}
	if math.Abs(l.LatencyRatio-0.006) > 1e-9 {
		t.Errorf("latency ratio %v, want 0.006", l.LatencyRatio)
	}
	o := sums[1]
	if o.Ours.OOMRuns != 0 || o.Upstream.OOMRuns != 1 || len(o.Upstream.Latencies) != 0 {
		t.Errorf("oom: %+v / %+v, want upstream's one OOM run and no latency for it", o.Ours, o.Upstream)
	}
	r := sums[2]
	if r.Ours.OverEvicted != 0 || r.Upstream.OverEvicted != 1 || Median(r.Upstream.Reliefs) != 25 {
		t.Errorf("relief: over-evicted %d/%d relief %v, want 0/1 and 25 s upstream", r.Ours.OverEvicted, r.Upstream.OverEvicted, r.Upstream.Reliefs)
	}
}

func names(sums []Summary) []string {
	var out []string
	for _, s := range sums {
		out = append(out, s.Scenario)
	}
	return out
}

// Soft scenarios: grace-late per run (expiry to the acting pass), its
// medians and ratio; a run whose kubelet never logged the grace's start
// has none.
func TestSummarizeGraceLate(t *testing.T) {
	soft := func(kubelet string, late time.Duration) Result {
		r := Result{Scenario: "softgrace", Kubelet: kubelet, Needed: 1, Evicted: 1, Grace: 15 * time.Second, GraceStart: t0}
		r.Acted = t0.Add(15*time.Second + late)
		return r
	}
	results := []Result{
		soft("evictkit", 2*time.Millisecond), soft("evictkit", 4*time.Millisecond), soft("evictkit", 30*time.Millisecond),
		soft("upstream", 5100*time.Millisecond), soft("upstream", 4900*time.Millisecond),
		{Scenario: "softgrace", Kubelet: "upstream", Needed: 1, Grace: 15 * time.Second},
	}
	sums := Summarize(results)
	if len(sums) != 1 {
		t.Fatalf("summaries for %v, want softgrace only", names(sums))
	}
	s := sums[0]
	if m := Median(s.Ours.GraceLate); m != 4 {
		t.Errorf("our median grace-late %v ms, want 4", m)
	}
	if len(s.Upstream.GraceLate) != 2 || Median(s.Upstream.GraceLate) != 5000 {
		t.Errorf("upstream grace-late %v, want 2 runs, median 5000", s.Upstream.GraceLate)
	}
	if math.Abs(s.GraceLateRatio-0.0008) > 1e-12 {
		t.Errorf("grace-late ratio %v, want 0.0008", s.GraceLateRatio)
	}
	var b bytes.Buffer
	if err := WriteMarkdown(&b, sums, "node", false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "| 4 / 5000 / 0.001 |") {
		t.Errorf("report row without grace-late 4 / 5000 / 0.001:\n%s", b.String())
	}
}

// Page cache scenarios: runs with MemoryPressure and runs with an
// eviction, per kubelet, in the report; other rows show none.
func TestSummarizePageCache(t *testing.T) {
	results := []Result{
		{Scenario: "pagecache", Kubelet: "evictkit"},
		{Scenario: "pagecache", Kubelet: "evictkit"},
		{Scenario: "pagecache", Kubelet: "evictkit", Error: "unmeasured"},
		{Scenario: "pagecache", Kubelet: "upstream", Pressure: true, Evicted: 1},
		{Scenario: "pagecache", Kubelet: "upstream", Pressure: true},
		{Scenario: "pagecache", Kubelet: "upstream", Evicted: 1},
		result("latency-1Gi", "evictkit", 30*time.Millisecond, time.Second, 1, 0, 1),
	}
	sums := Summarize(results)
	if len(sums) != 2 || sums[1].Scenario != "pagecache" || !sums[1].PageCache || sums[0].PageCache {
		t.Fatalf("summaries %v, want latency-1Gi then pagecache, only the latter a page cache scenario", names(sums))
	}
	pc := sums[1]
	if pc.Ours.PressureRuns != 0 || pc.Ours.EvictionRuns != 0 || pc.Upstream.PressureRuns != 2 || pc.Upstream.EvictionRuns != 2 {
		t.Errorf("pressure/eviction runs ours %d/%d upstream %d/%d, want 0/0 and 2/2",
			pc.Ours.PressureRuns, pc.Ours.EvictionRuns, pc.Upstream.PressureRuns, pc.Upstream.EvictionRuns)
	}
	var b bytes.Buffer
	if err := WriteMarkdown(&b, sums, "node", false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "| pagecache | 3 (1 unmeasured) / 3 |") || !strings.Contains(b.String(), "| 0 / 2 | 0 / 2 | – | – | – | – / – |\n") {
		t.Errorf("page cache row wrong:\n%s", b.String())
	}
	if !strings.Contains(b.String(), "| – | – | – | – | – | – / – |\n") {
		t.Errorf("the latency row shows pressure or eviction runs:\n%s", b.String())
	}
	if !strings.Contains(b.String(), "EvictionReclaimableMemory") {
		t.Errorf("the report does not name the gate on:\n%s", b.String())
	}
}

// Page-cache bystander: the runs with the bystander evicted, per kubelet,
// and the reclaimable crossing's latency beside the working set's.
func TestSummarizeBystander(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 17, 0, 0, 0, time.UTC)
	run := func(kubelet string, reclaimableLag, killAfter time.Duration, bystander bool) Result {
		return Result{Scenario: "latency-cache", Kubelet: kubelet, Needed: 1, Evicted: 1, Crossed: t0,
			CrossedReclaimable: t0.Add(reclaimableLag), KillCall: t0.Add(killAfter), BystanderEvicted: bystander}
	}
	sums := Summarize([]Result{
		run("evictkit", 2*time.Second, 2010*time.Millisecond, false),
		run("upstream", 2*time.Second, 4*time.Second, true),
		run("upstream", 2*time.Second, 6*time.Second, false),
	})
	if len(sums) != 1 || !sums[0].Bystander {
		t.Fatalf("summaries %v, want latency-cache only, a bystander scenario", names(sums))
	}
	s := sums[0]
	if s.Ours.BystanderRuns != 0 || s.Upstream.BystanderRuns != 1 {
		t.Errorf("bystander runs ours %d upstream %d, want 0 and 1", s.Ours.BystanderRuns, s.Upstream.BystanderRuns)
	}
	if got := Median(s.Ours.ReclaimableLatencies); got != 10 {
		t.Errorf("ours' reclaimable latency %v ms, want 10", got)
	}
	var b bytes.Buffer
	if err := WriteMarkdown(&b, sums, "node", false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "| latency-cache | 1 / 2 | 2010 / 5000 / 0.402 | 10 / 3000 / 0.003 |") || !strings.Contains(b.String(), "| – | – | – | – | 0 / 1 | – / – |\n") {
		t.Errorf("bystander row wrong:\n%s", b.String())
	}
}

// Hard during soft: crossing to recovery per run, whether or not a hog
// was killed (upstream's recovery comes when the soft victim ends).
func TestSummarizeDuringSoft(t *testing.T) {
	run := func(kubelet string, recovery time.Duration, killed bool) Result {
		r := Result{Scenario: "hard-during-soft", Kubelet: kubelet, Needed: 1, Crossed: t0, Recovered: t0.Add(recovery)}
		if killed {
			r.Evicted, r.FirstKill = 1, t0.Add(recovery/2)
		}
		return r
	}
	sums := Summarize([]Result{
		run("evictkit", 400*time.Millisecond, true), run("evictkit", 600*time.Millisecond, true),
		run("upstream", 52*time.Second, false), run("upstream", 54*time.Second, false), run("upstream", 56*time.Second, false),
		result("latency-1Gi", "evictkit", 30*time.Millisecond, time.Second, 1, 0, 1),
	})
	if len(sums) != 2 || !sums[1].DuringSoft || sums[0].DuringSoft || len(sums[0].Ours.Recoveries) != 0 {
		t.Fatalf("summaries %v: want latency-1Gi (no recoveries) then hard-during-soft", names(sums))
	}
	hs := sums[1]
	if Median(hs.Ours.Recoveries) != 0.5 || Median(hs.Upstream.Recoveries) != 54 {
		t.Errorf("recoveries ours %v upstream %v, want medians 0.5 and 54", hs.Ours.Recoveries, hs.Upstream.Recoveries)
	}
	var b bytes.Buffer
	if err := WriteMarkdown(&b, sums, "node", false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "| – | – | 0.50 / 54.00 / 0.009 | – | – | – / – |\n") {
		t.Errorf("hard-during-soft row without its recovery:\n%s", b.String())
	}
}

// Disk bursts: runs in which the writer ran out of room, per kubelet.
func TestSummarizeDiskBurst(t *testing.T) {
	run := func(kubelet string, full bool) Result {
		// Node-level reclaim began 40 ms (ours) and 80 ms (upstream)
		// before the kill call.
		reclaim := 60 * time.Millisecond
		if kubelet == "upstream" {
			reclaim = 20 * time.Millisecond
		}
		return Result{Scenario: "diskburst", Kubelet: kubelet, Needed: 1, Evicted: 1, Full: full,
			Crossed: t0, ReclaimStart: t0.Add(reclaim), KillCall: t0.Add(100 * time.Millisecond)}
	}
	sums := Summarize([]Result{
		run("evictkit", false), run("evictkit", false), run("upstream", true), run("upstream", false), run("upstream", true),
		result("latency-1Gi", "evictkit", 30*time.Millisecond, time.Second, 1, 0, 1),
	})
	if len(sums) != 2 || sums[0].DiskBurst || !sums[1].DiskBurst {
		t.Fatalf("summaries %v: want latency-1Gi then diskburst, only the latter a disk scenario", names(sums))
	}
	if d := sums[1]; d.Ours.FullRuns != 0 || d.Upstream.FullRuns != 2 || sums[0].Ours.FullRuns != 0 {
		t.Errorf("full runs ours %d upstream %d, want 0 and 2", d.Ours.FullRuns, d.Upstream.FullRuns)
	}
	var b bytes.Buffer
	if err := WriteMarkdown(&b, sums, "node", false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "| diskburst | 2 / 3 | 100 / 100 / 1.000 |") || !strings.Contains(b.String(), "| – | 0 / 2 | – | 40 / 80 |\n") {
		t.Errorf("diskburst row wrong:\n%s", b.String())
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{{[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}, {[]float64{7}, 7}} {
		if got := Median(tc.in); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("Median(nil) is not NaN")
	}
}

func TestResultsRoundTripAndReport(t *testing.T) {
	in := []Result{
		result("latency-1Gi", "evictkit", 30*time.Millisecond, time.Second, 1, 0, 1),
		result("latency-1Gi", "upstream", 9*time.Second, time.Second, 1, 0, 1),
	}
	// By the reclaimable rule the crossing comes 20 ms later for ours and
	// 500 ms later for upstream.
	in[0].CrossedReclaimable = in[0].Crossed.Add(20 * time.Millisecond)
	in[1].CrossedReclaimable = in[1].Crossed.Add(500 * time.Millisecond)
	var buf bytes.Buffer
	for _, r := range in {
		if err := WriteResult(&buf, r); err != nil {
			t.Fatal(err)
		}
	}
	out, err := ReadResults(&buf)
	if err != nil || len(out) != 2 || !out[0].FirstKill.Equal(in[0].FirstKill) || !out[1].CrossedReclaimable.Equal(in[1].CrossedReclaimable) {
		t.Fatalf("round trip: %+v, %v", out, err)
	}
	if _, err := ReadResults(strings.NewReader("{not json\n")); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("bad line: %v, want an error naming line 1", err)
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, Summarize(out), "evictkit-worker", false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| latency-1Gi | 1 / 1 | 30 / 9000 / 0.003 | 10 / 8500 / 0.001 | 530 / 9500 / 0.056 |") {
		t.Errorf("report row missing:\n%s", md.String())
	}
	png := filepath.Join(t.TempDir(), "latency.png")
	if err := PlotLatencies(png, Summarize(out)); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(png)
	if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Errorf("plot: %d bytes, %v; want a PNG", len(b), err)
	}
	if err := PlotLatencies(png, nil); err == nil {
		t.Error("plotting nothing did not fail")
	}
}

func TestRecoveryAfter(t *testing.T) {
	base := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return base.Add(time.Duration(ms) * time.Millisecond) }
	bounce, relief := at(40), at(2100)
	for _, tc := range []struct {
		name               string
		recoveries         []time.Time
		firstKill, crossed time.Time
		want               time.Time
	}{
		{name: "a bounce before the kill is not relief", recoveries: []time.Time{bounce, relief}, firstKill: at(60), crossed: at(0), want: relief},
		{name: "recovery at the kill's instant counts", recoveries: []time.Time{at(60)}, firstKill: at(60), want: at(60)},
		{name: "no kill: first recovery after the crossing", recoveries: []time.Time{bounce}, crossed: at(0), want: bounce},
		{name: "none after the kill", recoveries: []time.Time{bounce}, firstKill: at(60), want: time.Time{}},
		{name: "no recoveries", firstKill: at(60), want: time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := recoveryAfter(tc.recoveries, tc.firstKill, tc.crossed); !got.Equal(tc.want) {
				t.Errorf("recoveryAfter = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDefaultScenariosLeaveOutUnmeasured(t *testing.T) {
	var names []string
	for _, s := range DefaultScenarios() {
		if s.Unmeasured {
			t.Errorf("the default set has unmeasured scenario %s", s.Name)
		}
		names = append(names, s.Name)
	}
	if want := []string{"latency-200Mi", "latency-1Gi", "latency-cache", "oom", "oom-burst", "softgrace", "pagecache", "hard-during-soft", "relief-k3"}; !slices.Equal(names, want) {
		t.Errorf("default scenarios %v: want %v (all but diskburst, which needs the small-nodefs node)", names, want)
	}
}

package benche2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
)

// ReadResults reads results written one JSON object per line.
func ReadResults(r io.Reader) ([]Result, error) {
	var out []Result
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var res Result
		if err := json.Unmarshal(sc.Bytes(), &res); err != nil {
			return nil, fmt.Errorf("results line %d: %w", n, err)
		}
		out = append(out, res)
	}
	return out, sc.Err()
}

// Side is one kubelet's figures for one scenario.
type Side struct {
	Runs, Failed int // runs, and runs that could not be measured
	// Latencies (crossing to kill call) and Terminations (crossing to the
	// victim's SIGTERM), in ms, and Reliefs (s), of the runs that measured
	// them.
	Latencies, Terminations, Reliefs []float64
	// ReclaimableLatencies are crossing to kill call with the crossing by
	// the reclaimable rule (ms).
	ReclaimableLatencies []float64
	// Reclaims are the times from the start of node-level reclaim to the
	// kill call in the same pass (ms).
	Reclaims []float64
	// GraceLate is, for soft scenarios, the time from the grace period's
	// expiry to the pass that acted (ms).
	GraceLate []float64
	// TakenAtKill is what the first victim had taken at its kill (MiB).
	TakenAtKill []float64
	OOMRuns     int // runs in which the kernel OOM killer ended a hog
	FullRuns    int // runs in which the writer ran out of room (DiskBurst)
	OverEvicted int // hogs evicted beyond those needed, over all runs
	// Evictions counts the hogs evicted, over all runs.
	Evictions int
	// Recoveries are, for DuringSoft scenarios, the times from the
	// crossing to the recovery (s).
	Recoveries []float64
	// PressureRuns and EvictionRuns count the runs in which the node
	// reported MemoryPressure, and in which a pod was evicted (PageCache
	// scenarios).
	PressureRuns, EvictionRuns int
	// BystanderRuns counts the runs in which the page-cache bystander was
	// evicted (CachedBystander scenarios).
	BystanderRuns int
}

// Summary is one scenario's figures for both kubelets.
type Summary struct {
	Scenario string
	// PageCache: a PageCache scenario (pressure and eviction runs);
	// DuringSoft: a DuringSoft one (crossing to recovery); DiskBurst: a
	// disk one (filesystem full runs); Bystander: a CachedBystander one
	// (runs with the bystander evicted).
	PageCache, DuringSoft, DiskBurst, Bystander bool
	Ours, Upstream                              Side
	LatencyRatio                                float64 // median ours / median upstream; NaN when unknown
	ReclaimableLatencyRatio                     float64
	TerminationRatio                            float64
	ReliefRatio                                 float64
	TakenAtKillRatio                            float64
	GraceLateRatio                              float64
	RecoveryRatio                               float64
}

// Summarize groups results by scenario, in the order of Scenarios.
func Summarize(results []Result) []Summary {
	var out []Summary
	for _, sc := range Scenarios {
		s := Summary{Scenario: sc.Name, PageCache: sc.PageCache != "", DuringSoft: sc.DuringSoft != nil, DiskBurst: sc.DiskBurst != nil, Bystander: sc.CachedBystander != ""}
		for _, r := range results {
			if r.Scenario != sc.Name {
				continue
			}
			side := &s.Upstream
			if r.Kubelet == "evictkit" {
				side = &s.Ours
			}
			side.Runs++
			if r.Error != "" {
				side.Failed++
				continue
			}
			if v, ok := r.LatencyMs(); ok {
				side.Latencies = append(side.Latencies, v)
			}
			if v, ok := r.ReclaimableLatencyMs(); ok {
				side.ReclaimableLatencies = append(side.ReclaimableLatencies, v)
			}
			if v, ok := r.ReclaimMs(); ok {
				side.Reclaims = append(side.Reclaims, v)
			}
			if v, ok := r.TerminationMs(); ok {
				side.Terminations = append(side.Terminations, v)
				side.TakenAtKill = append(side.TakenAtKill, float64(r.TakenAtKill))
			}
			if v, ok := r.GraceLateMs(); ok {
				side.GraceLate = append(side.GraceLate, v)
			}
			if v, ok := r.ReliefSeconds(); ok {
				side.Reliefs = append(side.Reliefs, v)
			}
			if v, ok := r.RecoverySeconds(); ok && s.DuringSoft {
				side.Recoveries = append(side.Recoveries, v)
			}
			if r.OOMKilled > 0 {
				side.OOMRuns++
			}
			if r.Full {
				side.FullRuns++
			}
			if r.BystanderEvicted {
				side.BystanderRuns++
			}
			side.OverEvicted += r.OverEvicted()
			side.Evictions += r.Evicted
			if r.Pressure {
				side.PressureRuns++
			}
			if r.Evicted > 0 {
				side.EvictionRuns++
			}
		}
		if s.Ours.Runs+s.Upstream.Runs == 0 {
			continue
		}
		s.LatencyRatio = ratio(Median(s.Ours.Latencies), Median(s.Upstream.Latencies))
		s.ReclaimableLatencyRatio = ratio(Median(s.Ours.ReclaimableLatencies), Median(s.Upstream.ReclaimableLatencies))
		s.TerminationRatio = ratio(Median(s.Ours.Terminations), Median(s.Upstream.Terminations))
		s.ReliefRatio = ratio(Median(s.Ours.Reliefs), Median(s.Upstream.Reliefs))
		s.TakenAtKillRatio = ratio(Median(s.Ours.TakenAtKill), Median(s.Upstream.TakenAtKill))
		s.GraceLateRatio = ratio(Median(s.Ours.GraceLate), Median(s.Upstream.GraceLate))
		s.RecoveryRatio = ratio(Median(s.Ours.Recoveries), Median(s.Upstream.Recoveries))
		out = append(out, s)
	}
	return out
}

// Median of xs; NaN when empty.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func ratio(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) || b == 0 {
		return math.NaN()
	}
	return a / b
}

// WriteResult appends one result as a JSON line.
func WriteResult(w io.Writer, r Result) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

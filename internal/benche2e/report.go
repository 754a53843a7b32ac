package benche2e

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
)

// WriteMarkdown writes the benchmark's report: one table row per scenario
// with both kubelets' medians and the ratio ours/upstream, then what each
// scenario does. cgroupV2: the results are from a cgroup v2 node.
func WriteMarkdown(w io.Writer, sums []Summary, node string, cgroupV2 bool) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Side-by-side eviction benchmark on %s\n\n", node)
	on := maps.Clone(Gates)
	if cgroupV2 {
		b.WriteString("The node runs cgroup v2: both kubelets with kernelMemcgNotification: true. ")
		maps.Copy(on, GatesV2)
	}
	gates := slices.Sorted(maps.Keys(on))
	fmt.Fprintf(&b, "Ours: the evictkit kubelet with %s on; upstream: kubelet-upstream. ", strings.Join(gates, ", "))
	b.WriteString("Same node, same scenarios, the kubelets interleaved run by run. Crossing: the memory cgroup sampler (every 5 ms) ")
	b.WriteString("sees memory.available below the threshold. Kill call: the kubelet logs that it must evict pods (right before ranking and killing). ")
	b.WriteString("Termination: the first victim logs the SIGTERM (its own clock; the kill goes through the kubelet's pod worker first). ")
	b.WriteString("Grace-late (soft scenarios): from the grace period's expiry, counted from the first pass that observed the threshold met, to the pass that acted (the kubelet's log). ")
	b.WriteString("Crossing to recovery (hard during soft): from the hard crossing to the signal's recovery that followed the hog's kill, or the crossing when the hog was not killed. ")
	b.WriteString("Pressure / eviction runs (page cache scenarios): runs in which the node reported MemoryPressure, and in which a pod was evicted. ")
	b.WriteString("Disk scenarios: the crossing is nodefs's available bytes below the threshold (a statfs sampler, every 5 ms); full runs: the writer ran out of room before its SIGTERM. ")
	b.WriteString("Reclaimable crossing: the same sampler's crossing by the reclaimable rule (usage minus clean, unmapped file pages, at least the inactive ones: EvictionReclaimableMemory's rule, computed by the sampler on its own), which ours with that gate acts on; upstream acts on the first. ")
	b.WriteString("Bystander evicted runs (page-cache bystander scenarios): runs in which the kubelet evicted the bystander, whose memory is all clean page cache. ")
	b.WriteString("Reclaim to kill call: the part of crossing to kill call spent from the start of the pass's node-level reclaim (both kubelets log it). ")
	b.WriteString("Medians; ratio = ours / upstream.\n\n")
	b.WriteString("| Scenario | Runs (ours / upstream) | Crossing to kill call, ms (ours / upstream / ratio) | Reclaimable crossing to kill call, ms (ours / upstream / ratio) | Crossing to termination, ms (ours / upstream / ratio) | Taken at kill MiB (ours / upstream) | Kernel OOM runs (ours / upstream) | Relief s (ours / upstream / ratio) | Over-evicted (ours / upstream) | Grace-late ms (ours / upstream / ratio) | Pressure runs (ours / upstream) | Eviction runs (ours / upstream) | Crossing to recovery s (ours / upstream / ratio) | Filesystem full runs (ours / upstream) | Bystander evicted runs (ours / upstream) | Reclaim to kill call, ms (ours / upstream) |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range sums {
		pressure, evictions, recovery, full, bystander := "–", "–", "–", "–", "–"
		if s.Bystander {
			bystander = fmt.Sprintf("%d / %d", s.Ours.BystanderRuns, s.Upstream.BystanderRuns)
		}
		if s.DiskBurst {
			full = fmt.Sprintf("%d / %d", s.Ours.FullRuns, s.Upstream.FullRuns)
		}
		if s.DuringSoft {
			recovery = fmt.Sprintf("%s / %s / %s", num(Median(s.Ours.Recoveries), 2), num(Median(s.Upstream.Recoveries), 2), num(s.RecoveryRatio, 3))
		}
		if s.PageCache {
			pressure = fmt.Sprintf("%d / %d", s.Ours.PressureRuns, s.Upstream.PressureRuns)
			evictions = fmt.Sprintf("%d / %d", s.Ours.EvictionRuns, s.Upstream.EvictionRuns)
		}
		fmt.Fprintf(&b, "| %s | %s / %s | %s / %s / %s | %s / %s / %s | %s / %s / %s | %s / %s | %d / %d | %s / %s / %s | %d / %d | %s / %s / %s | %s | %s | %s | %s | %s | %s / %s |\n",
			s.Scenario, runs(s.Ours), runs(s.Upstream),
			num(Median(s.Ours.Latencies), 0), num(Median(s.Upstream.Latencies), 0), num(s.LatencyRatio, 3),
			num(Median(s.Ours.ReclaimableLatencies), 0), num(Median(s.Upstream.ReclaimableLatencies), 0), num(s.ReclaimableLatencyRatio, 3),
			num(Median(s.Ours.Terminations), 0), num(Median(s.Upstream.Terminations), 0), num(s.TerminationRatio, 3),
			num(Median(s.Ours.TakenAtKill), 0), num(Median(s.Upstream.TakenAtKill), 0),
			s.Ours.OOMRuns, s.Upstream.OOMRuns,
			num(Median(s.Ours.Reliefs), 2), num(Median(s.Upstream.Reliefs), 2), num(s.ReliefRatio, 3),
			s.Ours.OverEvicted, s.Upstream.OverEvicted,
			num(Median(s.Ours.GraceLate), 0), num(Median(s.Upstream.GraceLate), 0), num(s.GraceLateRatio, 3),
			pressure, evictions, recovery, full, bystander,
			num(Median(s.Ours.Reclaims), 0), num(Median(s.Upstream.Reclaims), 0))
	}
	b.WriteString("\n")
	for _, sc := range Scenarios {
		fmt.Fprintf(&b, "- `%s`: %s.\n", sc.Name, sc.What)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func runs(s Side) string {
	if s.Failed > 0 {
		return fmt.Sprintf("%d (%d unmeasured)", s.Runs, s.Failed)
	}
	return fmt.Sprintf("%d", s.Runs)
}

func num(v float64, digits int) string {
	if math.IsNaN(v) {
		return "–"
	}
	return fmt.Sprintf("%.*f", digits, v)
}

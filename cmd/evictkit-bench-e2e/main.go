// Command evictkit-bench-e2e is make bench-e2e: the side-by-side eviction
// benchmark of the evictkit kubelet (EvictionFastPath and
// EvictionReclaimSized on) against kubelet-upstream on one node of the
// running kind cluster. For each round it runs every scenario once on each
// kubelet, alternating which goes first, switching the node's kubelet
// between runs; each result is appended to a JSON-lines file as soon as it
// is measured, and the end writes a Markdown table and a PNG of the latency
// distributions (internal/benche2e). -report only re-renders them from a
// results file.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/evictkit/evictkit/internal/benche2e"
	"github.com/evictkit/evictkit/internal/nodeharness"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "evictkit-bench-e2e: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	root, _ := os.Getwd()
	var (
		cfg       nodeharness.Config
		rounds    = flag.Int("runs", 20, "runs of each scenario on each kubelet")
		scenarios = flag.String("scenarios", "", "comma-separated scenario names (default: all)")
		out       = flag.String("out", "", "directory for the results and the report (default ROOT/_output/reports)")
		report    = flag.Bool("report", false, "only write the report from the existing results file")
	)
	flag.StringVar(&cfg.Root, "root", root, "the evictkit checkout")
	flag.StringVar(&cfg.Cluster, "cluster", "evictkit", "the kind cluster's name")
	flag.StringVar(&cfg.Node, "node", "evictkit-worker", "the node both kubelets run on in turn")
	flag.StringVar(&cfg.Kubeconfig, "kubeconfig", "", "the cluster's kubeconfig (default ROOT/_output/kubeconfig)")
	flag.Parse()
	if *out == "" {
		*out = filepath.Join(cfg.Root, "_output", "reports")
	}
	if cfg.Kubeconfig == "" {
		cfg.Kubeconfig = filepath.Join(cfg.Root, "_output", "kubeconfig")
	}
	if *rounds < 1 {
		return fmt.Errorf("-runs %d: want at least 1", *rounds)
	}
	selected := benche2e.DefaultScenarios()
	if *scenarios != "" {
		selected = nil
		for _, name := range strings.Split(*scenarios, ",") {
			s, err := benche2e.ScenarioByName(strings.TrimSpace(name))
			if err != nil {
				return fmt.Errorf("-scenarios: %w", err)
			}
			selected = append(selected, s)
		}
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	resultsPath := filepath.Join(*out, "bench-e2e-results.jsonl")
	if !*report {
		if err := measure(cfg, selected, *rounds, resultsPath); err != nil {
			return err
		}
	}
	return writeReport(resultsPath, *out, cfg.Node)
}

// measure runs the rounds, appending each result to path (a new file).
func measure(cfg nodeharness.Config, selected []benche2e.Scenario, rounds int, path string) (err error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg.Kubelet = nodeharness.KubeletEvictkit
	cfg.Suite = "bench-e2e"
	cfg.LogDir = filepath.Join(cfg.Root, "_output", "logs", "bench-e2e")
	f, err := nodeharness.New(ctx, cfg)
	if err != nil {
		return err
	}
	if err := f.EnsurePriorityClasses(ctx); err != nil {
		return err
	}
	// However it ends, the node goes back to our kubelet.
	defer func() {
		if f.Kubelet != nodeharness.KubeletEvictkit {
			err = errors.Join(err, f.UseKubelet(context.WithoutCancel(ctx), nodeharness.KubeletEvictkit))
		}
	}()
	// An earlier run's results are kept, named by when they were written.
	if st, err := os.Stat(path); err == nil {
		kept := strings.TrimSuffix(path, ".jsonl") + "-" + st.ModTime().UTC().Format("20060102T150405Z") + ".jsonl"
		if err := os.Rename(path, kept); err != nil {
			return err
		}
		fmt.Printf("kept the earlier results as %s\n", kept)
	}
	file, err := os.Create(path)
	if err != nil {
		return err
	}
	defer file.Close()
	v2, err := f.CgroupV2(ctx)
	if err != nil {
		return err
	}
	r := &benche2e.Runner{F: f, CgroupV2: v2}
	if v2 {
		fmt.Printf("node %s runs on cgroup v2: kernelMemcgNotification on for both kubelets, %v on ours too\n", cfg.Node, benche2e.GatesV2)
	}
	start := time.Now()
	total := rounds * len(selected) * 2
	done := 0
	for round := 0; round < rounds; round++ {
		for i, s := range selected {
			// A B, then B A: neither kubelet always runs on a node the other
			// has just left.
			order := []string{nodeharness.KubeletUpstream, nodeharness.KubeletEvictkit}
			if (round+i)%2 == 1 {
				order[0], order[1] = order[1], order[0]
			}
			for _, kubelet := range order {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if f.Kubelet != kubelet {
					if err := f.UseKubelet(ctx, kubelet); err != nil {
						return err
					}
				}
				res := r.Run(ctx, s, round)
				done++
				if err := benche2e.WriteResult(file, res); err != nil {
					return err
				}
				fmt.Printf("[%d/%d, %s] %s\n", done, total, time.Since(start).Round(time.Second), describe(res))
			}
		}
	}
	return nil
}

func describe(r benche2e.Result) string {
	s := fmt.Sprintf("%s on %s (round %d):", r.Scenario, r.Kubelet, r.Round+1)
	if r.Error != "" {
		return s + " not measured: " + r.Error
	}
	if ms, ok := r.LatencyMs(); ok {
		s += fmt.Sprintf(" crossing to kill call %.0f ms;", ms)
	}
	if ms, ok := r.TerminationMs(); ok {
		s += fmt.Sprintf(" to the victim's SIGTERM %.0f ms, %d MiB taken then;", ms, r.TakenAtKill)
	}
	if sec, ok := r.ReliefSeconds(); ok {
		s += fmt.Sprintf(" relief %.2f s after the first kill;", sec)
	}
	if r.Pressure {
		s += " MemoryPressure reported;"
	}
	return s + fmt.Sprintf(" %d evicted (%d needed), %d OOM-killed (kernel's log; containerd's status: %d)", r.Evicted, r.Needed, r.OOMKilled, r.StatusOOMKilled)
}

func writeReport(resultsPath, out, node string) error {
	in, err := os.Open(resultsPath)
	if err != nil {
		return fmt.Errorf("results: %w (run without -report first)", err)
	}
	defer in.Close()
	results, err := benche2e.ReadResults(in)
	if err != nil {
		return err
	}
	sums := benche2e.Summarize(results)
	md := filepath.Join(out, "bench-e2e.md")
	mdFile, err := os.Create(md)
	if err != nil {
		return err
	}
	v2 := slices.ContainsFunc(results, func(r benche2e.Result) bool { return r.CgroupV2 })
	if err := benche2e.WriteMarkdown(mdFile, sums, node, v2); err != nil {
		mdFile.Close()
		return err
	}
	if err := mdFile.Close(); err != nil {
		return err
	}
	png := filepath.Join(out, "bench-e2e-latency.png")
	if err := benche2e.PlotLatencies(png, sums); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	body, _ := os.ReadFile(md)
	fmt.Printf("\n%s\nreport: %s, plot: %s, results: %s\n", body, md, png, resultsPath)
	return nil
}

// Command evictkit-parity runs upstream's eviction manager (v1.37.2) and
// evictkit's on the same generated scenarios through the package's exported
// API and reports how they compare (make parity). Its last line is
//
//	parity: N scenarios, D differ, X deviations (by name), M matched
//
// and it exits 1 if any difference is unexplained.
//
// Usage:
//
//	evictkit-parity [-n 5000] [-seed 1] [-bound 500] [-deviations] [-show]
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/evictkit/evictkit/internal/parity"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "evictkit-parity:", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("evictkit-parity", flag.ContinueOnError)
	n := fs.Int("n", 5000, "scenarios to run")
	seed := fs.Uint64("seed", 1, "seed of the first scenario; scenario i has seed+i")
	bound := fs.Int("bound", 500, "upstream runs per scenario, each with the pods in another order, before a difference counts (four times as many once a run went through evictkit's states)")
	listDeviations := fs.Bool("deviations", false, "print the deliberate deviations and exit")
	show := fs.Bool("show", false, "print both traces of each differing scenario")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if *listDeviations {
		for _, d := range parity.Deviations() {
			fmt.Fprintf(out, "%s\n  %s\n", d.Name, d.Effect)
		}
		return nil
	}
	if *n < 1 || *bound < 1 {
		return fmt.Errorf("-n and -bound must be at least 1 (got %d, %d)", *n, *bound)
	}
	start := time.Now()
	rep := parity.Run(*seed, *n, *bound, func(done int, _ parity.Result) {
		if done%500 == 0 {
			fmt.Fprintf(out, "  %d scenarios (%s)\n", done, time.Since(start).Round(time.Second))
		}
	})
	for _, d := range rep.Differences {
		fmt.Fprintf(out, "DIFFERS: seed %d (%d upstream runs, %d distinct outcomes): %s\n", d.Seed, d.Runs, d.Distinct, d.Diff)
		if *show {
			fmt.Fprintf(out, "--- evictkit\n%s\n--- upstream (first run)\n%s\n", d.Ours, d.Upstream)
		}
	}
	fmt.Fprintln(out, rep.CoverageLine())
	fmt.Fprintf(out, "most distinct upstream outcomes in one scenario: %d; time %s\n", rep.MaxDistinct, time.Since(start).Round(time.Second))
	fmt.Fprintln(out, rep)
	if rep.Differed > 0 {
		return fmt.Errorf("%d scenario(s) differ from upstream without a listed deviation (replay one with -seed SEED -n 1)", rep.Differed)
	}
	return nil
}

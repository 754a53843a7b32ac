// Command evictkit-report prints the summary of make e2e: per suite the
// specs passed, failed and skipped, the evictions the specs observed and
// the time, the failed specs, and the time of each phase of the job. It
// reads the suites' Ginkgo JSON reports and the job's phase log, and also
// writes the summary to a Markdown file.
//
// With -controls it judges a negative-control run instead (make
// test-node-controls): every spec must have failed as it said it would.
//
// With -upstream-node it tables upstream's node e2e passes (make
// test-upstream-node): per spec, the passes on each kubelet side by side.
//
// With -runtime-failure it tells whether a failed pass failed only because
// the container runtime could not create a test pod's container (make
// upstream-smoke reruns such a pass once): it prints the pods and the
// runtime's errors, or fails saying what else failed.
//
// Usage:
//
//	evictkit-report -phases PHASES.tsv -out SUMMARY.md NAME=REPORT.json...
//	evictkit-report -controls REPORT.json -kubelet KUBELET -out CONTROLS.md
//	evictkit-report -upstream-node DIR -out TABLE.md   (DIR/<kubelet>-<focus key>-pass<N>.xml)
//	evictkit-report -runtime-failure JUNIT.xml -kubelet-log KUBELET.log
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/evictkit/evictkit/internal/e2ereport"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "evictkit-report:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("evictkit-report", flag.ContinueOnError)
	phasesPath := fs.String("phases", "", "the job's phase log (name, seconds, ok|failed per line, tab-separated)")
	out := fs.String("out", "", "also write the summary to this Markdown file")
	controls := fs.String("controls", "", "judge this Ginkgo JSON report of a negative-control run")
	kubelet := fs.String("kubelet", "upstream", "the kubelet the negative controls ran on (for the table)")
	upstreamNode := fs.String("upstream-node", "", "table the JUnit reports <kubelet>-<focus key>-pass<N>.xml of make test-upstream-node in this directory")
	runtimeFailure := fs.String("runtime-failure", "", "tell whether this failed JUnit pass failed only on the container runtime (with -kubelet-log)")
	kubeletLog := fs.String("kubelet-log", "", "the kubelet's log of the pass given to -runtime-failure")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *runtimeFailure != "" {
		return runRuntimeFailure(*runtimeFailure, *kubeletLog, stdout)
	}
	if *controls != "" {
		return runControls(*controls, *kubelet, *out, stdout)
	}
	if *upstreamNode != "" {
		return runUpstreamNode(*upstreamNode, *out, stdout)
	}
	if fs.NArg() == 0 {
		return fmt.Errorf("no reports given: want NAME=REPORT.json arguments")
	}
	var suites []e2ereport.Suite
	for _, arg := range fs.Args() {
		name, path, ok := strings.Cut(arg, "=")
		if !ok || name == "" || path == "" {
			return fmt.Errorf("argument %q: want NAME=REPORT.json", arg)
		}
		s, err := e2ereport.Load(name, path)
		if err != nil {
			return err
		}
		suites = append(suites, s)
	}
	var phases []e2ereport.Phase
	if *phasesPath != "" {
		f, err := os.Open(*phasesPath)
		if err != nil {
			return err
		}
		defer f.Close()
		if phases, err = e2ereport.ParsePhases(f); err != nil {
			return fmt.Errorf("%s: %w", *phasesPath, err)
		}
	}
	var b strings.Builder
	if err := e2ereport.Render(&b, suites, phases); err != nil {
		return err
	}
	if *out != "" {
		if err := os.WriteFile(*out, []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	_, err := io.WriteString(stdout, b.String())
	return err
}

// runControls prints (and writes to out) the table of a negative-control
// run, and fails unless every control showed its expected failure.
func runControls(report, kubelet, out string, stdout io.Writer) error {
	cs, err := e2ereport.LoadControls(report)
	if err != nil {
		return err
	}
	var b strings.Builder
	ok, err := e2ereport.RenderControls(&b, kubelet, cs)
	if err != nil {
		return err
	}
	if out != "" {
		if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	if _, err := io.WriteString(stdout, b.String()); err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("not every negative control failed as expected (%s)", report)
	}
	return nil
}

// upstreamNodeKubelets are the kubelets make test-upstream-node runs, in
// the table's order.
var upstreamNodeKubelets = []string{"evictkit", "upstream"}

// runUpstreamNode prints (and writes to out) the side-by-side table of the
// passes of upstream's node e2e suite found in dir.
func runUpstreamNode(dir, out string, stdout io.Writer) error {
	tallies := map[string]map[string]*e2ereport.SpecTally{}
	var runs []string
	for _, k := range upstreamNodeKubelets {
		// <kubelet>-<focus key>-pass<N>.xml: every focus run so far counts.
		paths, err := filepath.Glob(filepath.Join(dir, k+"-*pass*.xml"))
		if err != nil {
			return err
		}
		if len(paths) == 0 {
			continue
		}
		t, err := e2ereport.LoadJUnitPasses(paths)
		if err != nil {
			return err
		}
		tallies[k] = t
		runs = append(runs, fmt.Sprintf("%s %d suite run(s)", k, len(paths)))
	}
	if len(runs) == 0 {
		return fmt.Errorf("%s: no JUnit reports <kubelet>-<focus key>-pass<N>.xml (run make test-upstream-node)", dir)
	}
	header := "## Upstream's node e2e specs, unmodified, on each kubelet (" + strings.Join(runs, ", ") + ")"
	var b strings.Builder
	if err := e2ereport.RenderUpstreamNode(&b, header, upstreamNodeKubelets, tallies); err != nil {
		return err
	}
	if out != "" {
		if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	_, err := io.WriteString(stdout, b.String())
	return err
}

// runRuntimeFailure prints the test pods the container runtime failed to
// create, or fails when the pass failed for anything else.
func runRuntimeFailure(junit, kubeletLog string, stdout io.Writer) error {
	if kubeletLog == "" {
		return fmt.Errorf("-runtime-failure %s: want the pass's kubelet log as -kubelet-log", junit)
	}
	failures, err := e2ereport.RuntimeCreateFailures(junit, kubeletLog)
	if err != nil {
		return err
	}
	for _, f := range failures {
		if _, err := fmt.Fprintf(stdout, "pod %s: %s\n", f.Pod, f.Error); err != nil {
			return err
		}
	}
	return nil
}

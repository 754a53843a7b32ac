// Command testreport reads `go test -json` events on stdin and prints
// what a reader of a CI log needs: the output of every failed test, one
// line per package, and every skipped test with its reason, so that a
// skip is never mistaken for a pass. It exits non-zero when a test or a
// package failed, or when a package's run did not finish.
//
//	go test -json ./... | go run ./scripts/testreport [-lane NAME]
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

type testKey struct{ pkg, test string }

// report accumulates the events of a run.
type report struct {
	output   map[testKey][]string
	result   map[testKey]string
	pkgDone  map[string]string
	pkgTime  map[string]float64
	packages []string
}

func newReport() *report {
	return &report{output: map[testKey][]string{}, result: map[testKey]string{}, pkgDone: map[string]string{}, pkgTime: map[string]float64{}}
}

func (r *report) add(e event) {
	k := testKey{e.Package, e.Test}
	if _, seen := r.pkgTime[e.Package]; !seen && e.Package != "" {
		r.packages = append(r.packages, e.Package)
		r.pkgTime[e.Package] = 0
	}
	switch e.Action {
	case "output":
		r.output[k] = append(r.output[k], e.Output)
	case "pass", "fail", "skip":
		if e.Test == "" {
			r.pkgDone[e.Package] = e.Action
			r.pkgTime[e.Package] = e.Elapsed
		} else {
			r.result[k] = e.Action
		}
	}
}

// skipReason is the last line a skipped test logged before its SKIP line.
func skipReason(lines []string) string {
	reason := ""
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- SKIP") {
			continue
		}
		reason = l
	}
	return reason
}

func (r *report) write(w io.Writer, lane string) (ok bool) {
	ok = true
	var failed, skipped []testKey
	counts := map[string]map[string]int{}
	for k, res := range r.result {
		if counts[k.pkg] == nil {
			counts[k.pkg] = map[string]int{}
		}
		counts[k.pkg][res]++
		switch res {
		case "fail":
			failed = append(failed, k)
		case "skip":
			skipped = append(skipped, k)
		}
	}
	less := func(s []testKey) func(i, j int) bool {
		return func(i, j int) bool {
			if s[i].pkg != s[j].pkg {
				return s[i].pkg < s[j].pkg
			}
			return s[i].test < s[j].test
		}
	}
	sort.Slice(failed, less(failed))
	sort.Slice(skipped, less(skipped))
	for _, k := range failed {
		// A parent fails with its subtests; their output says why.
		fmt.Fprintf(w, "--- FAIL: %s (%s)\n%s", k.test, k.pkg, strings.Join(r.output[k], ""))
	}
	header := "tests"
	if lane != "" {
		header += " (" + lane + ")"
	}
	fmt.Fprintf(w, "==> %s:\n", header)
	for _, pkg := range r.packages {
		c := counts[pkg]
		done := r.pkgDone[pkg]
		switch done {
		case "pass":
			done = "ok"
		case "skip":
			fmt.Fprintf(w, "    -    %s  no test files\n", pkg)
			continue
		case "":
			done, ok = "DID NOT FINISH", false
			fmt.Fprintf(w, "%s", strings.Join(r.output[testKey{pkg, ""}], ""))
		case "fail":
			done, ok = "FAIL", false
			if len(c) == 0 {
				fmt.Fprintf(w, "%s", strings.Join(r.output[testKey{pkg, ""}], ""))
			}
		}
		if c["fail"] > 0 {
			ok = false
		}
		fmt.Fprintf(w, "    %-4s %s  %d passed, %d failed, %d skipped  (%.1fs)\n", done, pkg, c["pass"], c["fail"], c["skip"], r.pkgTime[pkg])
	}
	if len(skipped) == 0 {
		fmt.Fprintf(w, "    skipped: none\n")
	} else {
		fmt.Fprintf(w, "    skipped: %d\n", len(skipped))
		for _, k := range skipped {
			fmt.Fprintf(w, "      %s (%s): %s\n", k.test, k.pkg, skipReason(r.output[k]))
		}
	}
	return ok
}

func main() {
	lane := flag.String("lane", "", "name of the run, printed in the summary")
	flag.Parse()
	r := newReport()
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			// Not an event: build output from go test itself.
			fmt.Println(sc.Text())
			continue
		}
		r.add(e)
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(os.Stderr, "testreport: reading stdin: %v\n", err)
		os.Exit(1)
	}
	if len(r.packages) == 0 {
		fmt.Fprintln(os.Stderr, "testreport: no test events on stdin")
		os.Exit(1)
	}
	if !r.write(os.Stdout, *lane) {
		os.Exit(1)
	}
}

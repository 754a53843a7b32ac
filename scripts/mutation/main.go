// Command mutation summarizes a gremlins run (make mutation): the score
// per file, killed mutants over all mutants that are not known to be
// equivalent (a mutant no test reached counts as surviving), and every
// surviving mutant with its source line. It fails below -min percent, or
// when an entry of the equivalent list no longer names a living mutant.
//
//	go run ./scripts/mutation -report mutation.json -src DIR -equivalent equivalent.txt [-recheck PKG] [-out mutation.md] [-min 90]
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// result is the part of gremlins' JSON output this reads.
type result struct {
	Files []struct {
		Name      string `json:"file_name"`
		Mutations []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
			Line   int    `json:"line"`
			Column int    `json:"column"`
		} `json:"mutations"`
	} `json:"files"`
}

// mutant is one mutation, by where and what.
type mutant struct {
	file       string
	line, col  int
	kind       string
	status     string
	equivalent string // why it changes nothing, when listed
	rechecked  bool   // gremlins said NOT COVERED; status is from recheck
}

func (m mutant) key() string { return fmt.Sprintf("%s:%d:%d %s", m.file, m.line, m.col, m.kind) }

// tally counts one file's mutants.
type tally struct {
	killed, lived, notCovered, equivalent, notViable int
}

func (t tally) score() float64 {
	total := t.killed + t.lived + t.notCovered
	if total == 0 {
		return 100
	}
	return 100 * float64(t.killed) / float64(total)
}

func main() {
	report := flag.String("report", "", "gremlins' JSON output")
	src := flag.String("src", "", "the module gremlins ran on (for source lines)")
	equivalent := flag.String("equivalent", "", "known equivalent mutants")
	core := flag.String("core", "", "the files to score, one per line (default: every file in the report)")
	out := flag.String("out", "", "also write the summary to this Markdown file")
	min := flag.Float64("min", 90, "fail below this score (percent)")
	recheckPkg := flag.String("recheck", "", "run the tests of this package of -src on each mutant gremlins calls NOT COVERED")
	timeout := flag.Duration("timeout", 5*time.Minute, "with -recheck: a test run taking longer kills the mutant")
	flag.Parse()
	var opts recheckOptions
	if *recheckPkg != "" {
		opts = recheckOptions{pkg: *recheckPkg, timeout: *timeout, progress: func(s string) { fmt.Fprintln(os.Stderr, "   ", s) }}
	}
	if err := run(*report, *src, *equivalent, *core, *out, *min, opts, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mutation:", err)
		os.Exit(1)
	}
}

// recheckOptions says whether and how run rechecks NOT COVERED mutants.
type recheckOptions struct {
	pkg      string // empty: no recheck
	timeout  time.Duration
	progress func(string)
}

func run(reportPath, src, equivalentPath, corePath, out string, min float64, rc recheckOptions, stdout io.Writer) error {
	raw, err := os.ReadFile(reportPath)
	if err != nil {
		return err
	}
	var r result
	if err := json.Unmarshal(raw, &r); err != nil {
		return fmt.Errorf("%s: %w", reportPath, err)
	}
	equivalents, err := readEquivalents(equivalentPath)
	if err != nil {
		return err
	}
	core, err := readList(corePath)
	if err != nil {
		return err
	}
	var all []mutant
	for _, f := range r.Files {
		if core != nil && !core[filepath.Base(f.Name)] {
			continue
		}
		for _, m := range f.Mutations {
			mu := mutant{file: filepath.Base(f.Name), line: m.Line, col: m.Column, kind: m.Type, status: m.Status}
			if why, ok := equivalents[mu.key()]; ok {
				mu.equivalent = why
			}
			all = append(all, mu)
		}
	}
	if rc.pkg != "" {
		if err := recheck(all, src, rc.pkg, rc.timeout, rc.progress); err != nil {
			return err
		}
	}
	var b strings.Builder
	ok, stale := summarize(&b, all, equivalents, src, min)
	if out != "" {
		if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	if _, err := io.WriteString(stdout, b.String()); err != nil {
		return err
	}
	switch {
	case len(stale) > 0:
		return fmt.Errorf("equivalent list names mutants that are killed or gone: %s", strings.Join(stale, "; "))
	case !ok:
		return fmt.Errorf("score below %.0f%%", min)
	}
	return nil
}

// readList reads a list of names, one per line ("#" comments); nil for
// no path.
func readList(path string) (map[string]bool, error) {
	if path == "" {
		return nil, nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, line := range strings.Split(string(raw), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			out[line] = true
		}
	}
	return out, nil
}

// readEquivalents reads "<file>:<line>:<col> <MUTATOR> <why>" lines.
func readEquivalents(path string) (map[string]string, error) {
	out := map[string]string{}
	if path == "" {
		return out, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.SplitN(line, " ", 3)
		if len(fields) < 3 || strings.Count(fields[0], ":") != 2 {
			return nil, fmt.Errorf("%s:%d: want \"<file>:<line>:<col> <MUTATOR> <why>\", got %q", path, n, line)
		}
		out[fields[0]+" "+fields[1]] = fields[2]
	}
	return out, sc.Err()
}

// summarize writes the per-file table and the survivors; it reports
// whether the total score reaches min, and the stale equivalent entries.
func summarize(w io.Writer, all []mutant, equivalents map[string]string, src string, min float64) (bool, []string) {
	perFile := map[string]*tally{}
	var total tally
	var survivors, equivalentLive, rechecked []mutant
	seen := map[string]bool{}
	var stale []string
	for _, m := range all {
		t := perFile[m.file]
		if t == nil {
			t = &tally{}
			perFile[m.file] = t
		}
		seen[m.key()] = true
		if m.rechecked {
			rechecked = append(rechecked, m)
		}
		switch {
		case m.status == "NOT VIABLE":
			t.notViable++
			total.notViable++
		case m.equivalent != "":
			if m.status == "KILLED" || m.status == "TIMED OUT" {
				stale = append(stale, m.key()+" is killed")
			}
			t.equivalent++
			total.equivalent++
			equivalentLive = append(equivalentLive, m)
		case m.status == "KILLED" || m.status == "TIMED OUT":
			t.killed++
			total.killed++
		case m.status == "LIVED":
			t.lived++
			total.lived++
			survivors = append(survivors, m)
		case m.status == "NOT COVERED":
			t.notCovered++
			total.notCovered++
			survivors = append(survivors, m)
		}
	}
	// Only files the run mutated can show an entry gone (FILES= runs a few).
	for k := range equivalents {
		if file, _, _ := strings.Cut(k, ":"); perFile[file] != nil && !seen[k] {
			stale = append(stale, k+" is not a mutant any more")
		}
	}
	sort.Strings(stale)
	files := make([]string, 0, len(perFile))
	for f := range perFile {
		files = append(files, f)
	}
	sort.Strings(files)
	fmt.Fprintf(w, "## Mutation score of the decision core (gremlins)\n\n")
	fmt.Fprintf(w, "| File | Killed | Lived | Not covered | Equivalent | Not viable | Score |\n|---|---:|---:|---:|---:|---:|---:|\n")
	for _, f := range files {
		t := perFile[f]
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %d | %.1f%% |\n", f, t.killed, t.lived, t.notCovered, t.equivalent, t.notViable, t.score())
	}
	fmt.Fprintf(w, "| **all** | %d | %d | %d | %d | %d | **%.1f%%** |\n\n", total.killed, total.lived, total.notCovered, total.equivalent, total.notViable, total.score())
	fmt.Fprintf(w, "Score: killed / (killed + lived + not covered); equivalent and not viable mutants left out.\n\n")
	if len(rechecked) > 0 {
		sortMutants(rechecked)
		fmt.Fprintf(w, "### Rechecked (%d)\n\ngremlins reported these NOT COVERED (Go's coverage counts no case expression and no constant); the package's tests were run on each:\n\n", len(rechecked))
		for _, m := range rechecked {
			fmt.Fprintf(w, "- `%s` %s\n", m.key(), m.status)
		}
		fmt.Fprintln(w)
	}
	sortMutants(survivors)
	fmt.Fprintf(w, "### Surviving mutants (%d)\n\n", len(survivors))
	for _, m := range survivors {
		fmt.Fprintf(w, "- `%s` %s: `%s`\n", m.key(), m.status, sourceLine(src, m))
	}
	sortMutants(equivalentLive)
	fmt.Fprintf(w, "\n### Equivalent mutants (%d)\n\n", len(equivalentLive))
	for _, m := range equivalentLive {
		fmt.Fprintf(w, "- `%s`: %s\n", m.key(), m.equivalent)
	}
	return total.score() >= min, stale
}

func sortMutants(ms []mutant) {
	sort.Slice(ms, func(i, j int) bool {
		if ms[i].file != ms[j].file {
			return ms[i].file < ms[j].file
		}
		if ms[i].line != ms[j].line {
			return ms[i].line < ms[j].line
		}
		if ms[i].col != ms[j].col {
			return ms[i].col < ms[j].col
		}
		return ms[i].kind < ms[j].kind
	})
}

// sourceLine returns the mutated line of the package's source, trimmed.
func sourceLine(src string, m mutant) string {
	raw, err := os.ReadFile(filepath.Join(src, "pkg", "kubelet", "eviction", m.file))
	if err != nil {
		return "?"
	}
	lines := strings.Split(string(raw), "\n")
	if m.line < 1 || m.line > len(lines) {
		return "?"
	}
	return strings.ReplaceAll(strings.TrimSpace(lines[m.line-1]), "`", "'")
}

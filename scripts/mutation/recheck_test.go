package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMutate(t *testing.T) {
	src := "package p\n\nconst c = 100 * scale\n\nfunc f(a, b int) bool {\n\tswitch {\n\tcase a < b:\n\t\treturn a >= b\n\t}\n\treturn a == b\n}\n"
	cases := []struct {
		line, col int
		kind      string
		want      string // the mutated line
		err       string
	}{
		{3, 15, "ARITHMETIC_BASE", "const c = 100 / scale", ""},
		{7, 9, "CONDITIONALS_BOUNDARY", "\tcase a <= b:", ""},
		{7, 9, "CONDITIONALS_NEGATION", "\tcase a >= b:", ""},
		{8, 12, "CONDITIONALS_BOUNDARY", "\t\treturn a > b", ""},
		{10, 11, "CONDITIONALS_NEGATION", "\treturn a != b", ""},
		{10, 11, "ARITHMETIC_BASE", "", "== has no ARITHMETIC_BASE mutation"},
		{10, 12, "CONDITIONALS_NEGATION", "", "no token at 10:12"},
		{10, 11, "INVERT_LOOPCTRL", "", "not one recheck knows"},
	}
	for _, tc := range cases {
		got, err := mutate([]byte(src), tc.line, tc.col, tc.kind)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%d:%d %s: error %v, want one with %q", tc.line, tc.col, tc.kind, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%d:%d %s: %v", tc.line, tc.col, tc.kind, err)
			continue
		}
		lines := strings.Split(string(got), "\n")
		if lines[tc.line-1] != tc.want {
			t.Errorf("%d:%d %s: line %q, want %q", tc.line, tc.col, tc.kind, lines[tc.line-1], tc.want)
		}
		if strings.Join(append(lines[:tc.line-1:tc.line-1], lines[tc.line:]...), "\n") != strings.Join(append(strings.Split(src, "\n")[:tc.line-1:tc.line-1], strings.Split(src, "\n")[tc.line:]...), "\n") {
			t.Errorf("%d:%d %s: other lines changed:\n%s", tc.line, tc.col, tc.kind, got)
		}
	}
}

// recheck runs real tests: a module whose test pins a comparison kills
// the mutant of that comparison and not the one of an unpinned constant,
// and the source is left as it was.
func TestRecheck(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test on a module of its own")
	}
	src := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(src, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n\ngo 1.22\n")
	code := "package p\n\nconst unused = 2 * 3\n\nfunc Less(a, b int) bool {\n\tswitch {\n\tcase a < b:\n\t\treturn true\n\t}\n\treturn false\n}\n"
	write("p/p.go", code)
	write("p/p_test.go", "package p\n\nimport \"testing\"\n\nfunc TestLess(t *testing.T) {\n\tif Less(1, 1) || !Less(1, 2) {\n\t\tt.Fatal(\"Less\")\n\t}\n}\n")
	all := []mutant{
		{file: "p.go", line: 7, col: 9, kind: "CONDITIONALS_BOUNDARY", status: "NOT COVERED"},
		{file: "p.go", line: 3, col: 18, kind: "ARITHMETIC_BASE", status: "NOT COVERED"},
		{file: "p.go", line: 7, col: 9, kind: "CONDITIONALS_NEGATION", status: "KILLED"},
	}
	if err := recheck(all, src, "p", time.Minute, func(string) {}); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"KILLED", "LIVED", "KILLED"} {
		if all[i].status != want {
			t.Errorf("%s: %s, want %s", all[i].key(), all[i].status, want)
		}
	}
	if !all[0].rechecked || !all[1].rechecked || all[2].rechecked {
		t.Errorf("rechecked flags %v %v %v, want the NOT COVERED ones only", all[0].rechecked, all[1].rechecked, all[2].rechecked)
	}
	if got, _ := os.ReadFile(filepath.Join(src, "p/p.go")); string(got) != code {
		t.Errorf("source not restored:\n%s", got)
	}
}

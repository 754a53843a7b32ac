package main

import (
	"strings"
	"testing"
)

func TestSummarize(t *testing.T) {
	all := []mutant{
		{file: "rank.go", line: 1, col: 1, kind: "CONDITIONALS_NEGATION", status: "KILLED"},
		{file: "rank.go", line: 2, col: 1, kind: "CONDITIONALS_NEGATION", status: "KILLED"},
		{file: "rank.go", line: 3, col: 1, kind: "ARITHMETIC_BASE", status: "LIVED"},
		{file: "parse.go", line: 4, col: 2, kind: "CONDITIONALS_BOUNDARY", status: "NOT COVERED"},
		{file: "parse.go", line: 5, col: 2, kind: "CONDITIONALS_BOUNDARY", status: "LIVED", equivalent: "same result"},
		{file: "parse.go", line: 6, col: 2, kind: "INVERT_NEGATIVES", status: "NOT VIABLE"},
		{file: "parse.go", line: 7, col: 2, kind: "INVERT_NEGATIVES", status: "TIMED OUT"},
	}
	equivalents := map[string]string{"parse.go:5:2 CONDITIONALS_BOUNDARY": "same result", "parse.go:9:9 ARITHMETIC_BASE": "gone",
		"usage.go:1:1 ARITHMETIC_BASE": "a file this run did not mutate"}
	var b strings.Builder
	ok, stale := summarize(&b, all, equivalents, "", 60)
	// 3 killed (2 + a time-out) of 5 counted: 60 %.
	if !ok || !strings.Contains(b.String(), "**60.0%**") {
		t.Errorf("ok=%v, want a 60%% score:\n%s", ok, b.String())
	}
	if len(stale) != 1 || !strings.Contains(stale[0], "parse.go:9:9") {
		t.Errorf("stale = %v, want the entry that names no mutant (and none of a file not mutated)", stale)
	}
	for _, want := range []string{"`rank.go:3:1 ARITHMETIC_BASE` LIVED", "`parse.go:4:2 CONDITIONALS_BOUNDARY` NOT COVERED", "`parse.go:5:2 CONDITIONALS_BOUNDARY`: same result"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
	if ok, _ := summarize(&strings.Builder{}, all, equivalents, "", 61); ok {
		t.Error("a 60% score passes a minimum of 61%")
	}
}

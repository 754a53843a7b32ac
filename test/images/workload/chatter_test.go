package main

import (
	"bytes"
	"encoding/base64"
	"testing"
)

func TestRandomLines(t *testing.T) {
	out, err := randomLines(1<<16, 1024)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1<<16 {
		t.Fatalf("got %d bytes, want %d", len(out), 1<<16)
	}
	lines := bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n"))
	if len(lines) != 64 {
		t.Fatalf("got %d lines, want 64", len(lines))
	}
	seen := map[string]bool{}
	for i, l := range lines {
		if len(l) != 1023 {
			t.Fatalf("line %d has %d characters, want 1023", i, len(l))
		}
		if _, err := base64.StdEncoding.DecodeString(string(l[:1020])); err != nil {
			t.Fatalf("line %d is not base64: %v", i, err)
		}
		if seen[string(l)] {
			t.Fatalf("line %d repeats an earlier one", i)
		}
		seen[string(l)] = true
	}
}

package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func events(t *testing.T, es ...event) *report {
	t.Helper()
	r := newReport()
	for _, e := range es {
		// Through JSON, as the events arrive.
		raw, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var back event
		if err := json.Unmarshal(raw, &back); err != nil {
			t.Fatal(err)
		}
		r.add(back)
	}
	return r
}

func TestReport(t *testing.T) {
	const pkg = "example.com/p"
	cases := []struct {
		name   string
		events []event
		ok     bool
		want   []string
	}{
		{
			name: "all passed",
			events: []event{
				{Action: "run", Package: pkg, Test: "TestA"},
				{Action: "pass", Package: pkg, Test: "TestA"},
				{Action: "pass", Package: pkg, Elapsed: 1.5},
			},
			ok:   true,
			want: []string{"ok   example.com/p  1 passed, 0 failed, 0 skipped  (1.5s)", "skipped: none"},
		},
		{
			name: "a skip is listed with its reason",
			events: []event{
				{Action: "output", Package: pkg, Test: "TestB", Output: "=== RUN   TestB\n"},
				{Action: "output", Package: pkg, Test: "TestB", Output: "    b_test.go:9: needs cgroup v2\n"},
				{Action: "output", Package: pkg, Test: "TestB", Output: "--- SKIP: TestB (0.00s)\n"},
				{Action: "skip", Package: pkg, Test: "TestB"},
				{Action: "pass", Package: pkg},
			},
			ok:   true,
			want: []string{"0 passed, 0 failed, 1 skipped", "TestB (example.com/p): b_test.go:9: needs cgroup v2"},
		},
		{
			name: "a failure prints its output and fails",
			events: []event{
				{Action: "output", Package: pkg, Test: "TestC", Output: "    c_test.go:3: boom\n"},
				{Action: "fail", Package: pkg, Test: "TestC"},
				{Action: "fail", Package: pkg},
			},
			want: []string{"--- FAIL: TestC (example.com/p)", "c_test.go:3: boom", "FAIL example.com/p"},
		},
		{
			name: "a run that never finished fails",
			events: []event{
				{Action: "run", Package: pkg, Test: "TestD"},
				{Action: "output", Package: pkg, Output: "panic: test timed out\n"},
			},
			want: []string{"DID NOT FINISH example.com/p", "panic: test timed out"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			ok := events(t, tc.events...).write(&b, "")
			if ok != tc.ok {
				t.Errorf("ok = %v, want %v\n%s", ok, tc.ok, b.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("report lacks %q:\n%s", w, b.String())
				}
			}
		})
	}
}

package workloadlog

import (
	"testing"
	"time"
)

// The lines below are written out by hand, as the workload printed them
// before this package existed: the protocol must not change under the
// readers' feet.

func TestSignalLine(t *testing.T) {
	at := time.Date(2026, 12, 1, 6, 30, 1, 500000000, time.UTC)
	s := Signal{Name: SigtermName, At: at.In(time.FixedZone("X", 3600)), Taken: "120 MiB"}
	const want = "received terminated at 2026-12-01T06:30:01.5Z with 120 MiB taken"
	if got := s.String(); got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
	back, ok := ParseSignal(want)
	if !ok || back.Name != "terminated" || !back.At.Equal(at) || back.Taken != "120 MiB" {
		t.Fatalf("ParseSignal(%q) = %+v, %v", want, back, ok)
	}
	if n, ok := back.TakenMiB(); !ok || n != 120 {
		t.Fatalf("TakenMiB() = %d, %v; want 120, true", n, ok)
	}
}

func TestSignalTakenInOtherUnits(t *testing.T) {
	s, ok := ParseSignal("received interrupt at 2026-12-01T06:30:01Z with 3000 threads taken")
	if !ok || s.Name != "interrupt" || s.Taken != "3000 threads" {
		t.Fatalf("got %+v, %v", s, ok)
	}
	if _, ok := s.TakenMiB(); ok {
		t.Fatal("TakenMiB() of a thread count reported ok")
	}
}

func TestParseSignalRejects(t *testing.T) {
	for _, line := range []string{
		"",
		Holding,
		"memory: 120 MiB of 900 MiB",
		"received terminated at yesterday with 120 MiB taken",
		"received terminated at 2026-12-01T06:30:01Z with 120 MiB",
		" received terminated at 2026-12-01T06:30:01Z with 120 MiB taken",
	} {
		if s, ok := ParseSignal(line); ok {
			t.Errorf("ParseSignal(%q) = %+v, want no match", line, s)
		}
	}
}

func TestFirstSigterm(t *testing.T) {
	lines := []string{
		"memory: 40 MiB of 900 MiB",
		"received interrupt at 2026-12-01T06:30:00Z with 80 MiB taken",
		"received terminated at 2026-12-01T06:30:02Z with 120 MiB taken",
		"received terminated at 2026-12-01T06:30:03Z with 130 MiB taken",
	}
	s, ok := FirstSigterm(lines)
	if !ok || s.Taken != "120 MiB" || s.At.Second() != 2 {
		t.Fatalf("FirstSigterm = %+v, %v; want the 120 MiB line", s, ok)
	}
	if _, ok := FirstSigterm(lines[:2]); ok {
		t.Fatal("FirstSigterm found a SIGTERM among lines without one")
	}
}

func TestCrossingLines(t *testing.T) {
	at := time.Date(2026, 12, 1, 6, 30, 0, 123456789, time.UTC)
	for _, tc := range []struct {
		c    Crossing
		want string
	}{
		{Crossing{At: at, Available: 629145600}, "crossed at 2026-12-01T06:30:00.123456789Z available 629145600"},
		{Crossing{Recovered: true, At: at, Available: -4096}, "recovered at 2026-12-01T06:30:00.123456789Z available -4096"},
		{Crossing{At: at, Available: 7, Rule: RuleReclaimable}, "crossed at 2026-12-01T06:30:00.123456789Z available 7 rule reclaimable"},
	} {
		if got := tc.c.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
		back, ok := ParseCrossing(tc.want)
		if !ok || back.Recovered != tc.c.Recovered || !back.At.Equal(at) || back.Available != tc.c.Available || back.Rule != tc.c.Rule {
			t.Errorf("ParseCrossing(%q) = %+v, %v", tc.want, back, ok)
		}
	}
	for _, line := range []string{"lowest 1 at 2026-12-01T06:30:00Z", "crossed at 2026-12-01T06:30:00Z available many", "crossed at 2026-12-01T06:30:00Z available 7 rule", "memwatch: sampling"} {
		if c, ok := ParseCrossing(line); ok {
			t.Errorf("ParseCrossing(%q) = %+v, want no match", line, c)
		}
	}
}

//evictkit:file wired

package eviction

import (
	"reflect"
	"strings"
	"testing"
)

type kv = map[string]string

func TestParseThresholdConfig(t *testing.T) {
	cases := []struct {
		name                        string
		alloc                       []string
		hard, soft, grace, minClaim kv
		want                        []string
	}{
		{
			name: "nothing configured gives no thresholds",
			want: []string{},
		},
		{
			name: "hard quantity",
			hard: kv{"memory.available": "150Mi"},
			want: []string{"memory.available LessThan 150Mi grace=0s reclaim=-"},
		},
		{
			name: "hard percentage",
			hard: kv{"nodefs.available": "12.5%"},
			want: []string{"nodefs.available LessThan 12.5% grace=0s reclaim=-"},
		},
		{
			name: "zero and hundred percent disable the signal",
			hard: kv{"nodefs.available": "0%", "imagefs.available": "100%", "pid.available": "10%"},
			want: []string{"pid.available LessThan 10% grace=0s reclaim=-"},
		},
		{
			name: "zero percent written otherwise is a threshold at 0%, as upstream's",
			hard: kv{"nodefs.available": "0.0%"},
			want: []string{"nodefs.available LessThan 0% grace=0s reclaim=-"},
		},
		{
			name: "hundred percent written otherwise is a threshold at 100%, as upstream's",
			hard: kv{"nodefs.available": "100.0%"},
			want: []string{"nodefs.available LessThan 100% grace=0s reclaim=-"},
		},
		{
			name:  "a disabled soft threshold needs no grace period",
			soft:  kv{"nodefs.available": "0%"},
			grace: kv{},
			want:  []string{},
		},
		{
			name:  "soft threshold takes its grace period",
			soft:  kv{"memory.available": "300Mi"},
			grace: kv{"memory.available": "90s"},
			want:  []string{"memory.available LessThan 300Mi grace=1m30s reclaim=-"},
		},
		{
			name:  "grace periods for signals without a soft threshold are ignored",
			soft:  kv{"memory.available": "300Mi"},
			grace: kv{"memory.available": "1m", "nodefs.available": "2m"},
			want:  []string{"memory.available LessThan 300Mi grace=1m0s reclaim=-"},
		},
		{
			name:     "minimum reclaim quantity applies to hard and soft thresholds of the signal",
			hard:     kv{"memory.available": "100Mi", "nodefs.available": "1Gi"},
			soft:     kv{"memory.available": "200Mi"},
			grace:    kv{"memory.available": "30s"},
			minClaim: kv{"memory.available": "50Mi"},
			want: []string{
				"memory.available LessThan 100Mi grace=0s reclaim=50Mi",
				"nodefs.available LessThan 1Gi grace=0s reclaim=-",
				"memory.available LessThan 200Mi grace=30s reclaim=50Mi",
			},
		},
		{
			name:     "minimum reclaim percentage",
			hard:     kv{"nodefs.inodesFree": "5%"},
			minClaim: kv{"nodefs.inodesFree": "2.5%"},
			want:     []string{"nodefs.inodesFree LessThan 5% grace=0s reclaim=2.5%"},
		},
		{
			name:     "zero minimum reclaim quantity is allowed",
			hard:     kv{"imagefs.available": "2Gi"},
			minClaim: kv{"imagefs.available": "0"},
			want:     []string{"imagefs.available LessThan 2Gi grace=0s reclaim=0"},
		},
		{
			name:     "minimum reclaim for a signal without threshold is kept out",
			hard:     kv{"memory.available": "100Mi"},
			minClaim: kv{"pid.available": "100"},
			want:     []string{"memory.available LessThan 100Mi grace=0s reclaim=-"},
		},
		{
			name:     "pods enforcement copies only hard memory.available to allocatable",
			alloc:    []string{"system-reserved", "pods"},
			hard:     kv{"memory.available": "100Mi", "nodefs.available": "10%"},
			soft:     kv{"memory.available": "200Mi"},
			grace:    kv{"memory.available": "1m"},
			minClaim: kv{"memory.available": "20Mi"},
			want: []string{
				"memory.available LessThan 100Mi grace=0s reclaim=20Mi",
				"nodefs.available LessThan 10% grace=0s reclaim=-",
				"memory.available LessThan 200Mi grace=1m0s reclaim=20Mi",
				"allocatableMemory.available LessThan 100Mi grace=0s reclaim=20Mi",
			},
		},
		{
			// A zero grace period makes a soft threshold hard, as upstream.
			name:  "pods enforcement copies a soft memory threshold with zero grace",
			alloc: []string{"pods"},
			soft:  kv{"memory.available": "200Mi"},
			grace: kv{"memory.available": "0s"},
			want: []string{
				"memory.available LessThan 200Mi grace=0s reclaim=-",
				"allocatableMemory.available LessThan 200Mi grace=0s reclaim=-",
			},
		},
		{
			name:  "other enforcement keys copy nothing",
			alloc: []string{"system-reserved", "kube-reserved"},
			hard:  kv{"memory.available": "100Mi"},
			want:  []string{"memory.available LessThan 100Mi grace=0s reclaim=-"},
		},
		{
			name:  "pods enforcement without a hard memory threshold copies nothing",
			alloc: []string{"pods"},
			hard:  kv{"nodefs.available": "10%"},
			want:  []string{"nodefs.available LessThan 10% grace=0s reclaim=-"},
		},
		{
			name: "hard then soft, each in signal-table order",
			hard: kv{
				"pid.available": "100", "containerfs.inodesFree": "1%", "imagefs.available": "15%",
				"nodefs.inodesFree": "5%", "allocatableMemory.available": "50Mi", "memory.available": "100Mi",
				"containerfs.available": "3%", "imagefs.inodesFree": "4%", "nodefs.available": "10%",
			},
			soft:  kv{"pid.available": "200", "nodefs.available": "20%", "memory.available": "300Mi"},
			grace: kv{"pid.available": "1m", "nodefs.available": "2m", "memory.available": "3m"},
			want: []string{
				"memory.available LessThan 100Mi grace=0s reclaim=-",
				"allocatableMemory.available LessThan 50Mi grace=0s reclaim=-",
				"nodefs.available LessThan 10% grace=0s reclaim=-",
				"nodefs.inodesFree LessThan 5% grace=0s reclaim=-",
				"imagefs.available LessThan 15% grace=0s reclaim=-",
				"imagefs.inodesFree LessThan 4% grace=0s reclaim=-",
				"containerfs.available LessThan 3% grace=0s reclaim=-",
				"containerfs.inodesFree LessThan 1% grace=0s reclaim=-",
				"pid.available LessThan 100 grace=0s reclaim=-",
				"memory.available LessThan 300Mi grace=3m0s reclaim=-",
				"nodefs.available LessThan 20% grace=2m0s reclaim=-",
				"pid.available LessThan 200 grace=1m0s reclaim=-",
			},
		},
		{
			// Upstream trims every trailing '%' before parsing the number.
			name: "a doubled percent sign parses like a single one, as upstream",
			hard: kv{"nodefs.available": "10%%"},
			want: []string{"nodefs.available LessThan 10% grace=0s reclaim=-"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseThresholdConfig(tc.alloc, tc.hard, tc.soft, tc.grace, tc.minClaim)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if got == nil {
				t.Fatalf("got nil thresholds, want a non-nil list")
			}
			if d := describeAll(got); !reflect.DeepEqual(d, tc.want) {
				t.Errorf("thresholds:\n got  %q\n want %q", d, tc.want)
			}
		})
	}
}

func TestParseThresholdConfigIsDeterministic(t *testing.T) {
	hardIn := kv{"pid.available": "100", "imagefs.available": "15%", "memory.available": "100Mi", "nodefs.inodesFree": "5%"}
	softIn := kv{"nodefs.available": "20%", "memory.available": "300Mi", "imagefs.inodesFree": "7%"}
	graceIn := kv{"nodefs.available": "2m", "memory.available": "3m", "imagefs.inodesFree": "1m"}
	first, err := ParseThresholdConfig([]string{"pods"}, hardIn, softIn, graceIn, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		again, err := ParseThresholdConfig([]string{"pods"}, hardIn, softIn, graceIn, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(describeAll(again), describeAll(first)) {
			t.Fatalf("run %d gave %q, first run gave %q", i, describeAll(again), describeAll(first))
		}
	}
}

// Upstream reports whichever unknown signal its map order gives; ours
// reports the lexically first.
func TestParseThresholdConfigNamesTheFirstUnknownSignal(t *testing.T) {
	_, err := ParseThresholdConfig(nil, kv{"zz.bogus": "1", "aa.bogus": "1", "memory.available": "1Gi"}, nil, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "aa.bogus") || strings.Contains(err.Error(), "zz.bogus") {
		t.Fatalf("error %v, want one naming aa.bogus only", err)
	}
}

func TestParseThresholdConfigMinReclaimNotShared(t *testing.T) {
	got, err := ParseThresholdConfig(nil, kv{"memory.available": "1Gi", "nodefs.available": "1Gi"}, nil, nil,
		kv{"memory.available": "100Mi", "nodefs.available": "200Mi"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].MinReclaim == got[1].MinReclaim {
		t.Fatalf("each threshold must own its minimum reclaim, got %q", describeAll(got))
	}
}

func TestParseThresholdConfigErrors(t *testing.T) {
	cases := []struct {
		name                        string
		hard, soft, grace, minClaim kv
		// every fragment must appear in the error message.
		mention []string
	}{
		{name: "hard percentage above 100", hard: kv{"nodefs.available": "101%"}, mention: []string{"nodefs.available", "101%"}},
		{name: "soft percentage above 100", soft: kv{"imagefs.available": "150%"}, grace: kv{"imagefs.available": "1m"}, mention: []string{"imagefs.available", "150%"}},
		{name: "negative percentage", hard: kv{"nodefs.inodesFree": "-5%"}, mention: []string{"nodefs.inodesFree", "-5%"}},
		{name: "percentage that is not a number", hard: kv{"nodefs.available": "ten%"}, mention: []string{"nodefs.available", "ten%"}},
		{name: "zero quantity", hard: kv{"memory.available": "0"}, mention: []string{"memory.available", `"0"`}},
		{name: "zero quantity with unit", hard: kv{"memory.available": "0Mi"}, mention: []string{"memory.available", "0Mi"}},
		{name: "negative quantity", hard: kv{"memory.available": "-1Gi"}, mention: []string{"memory.available", "-1Gi"}},
		{name: "malformed quantity", hard: kv{"pid.available": "lots"}, mention: []string{"pid.available", "lots"}},
		{name: "soft threshold without grace period names the signal", soft: kv{"nodefs.available": "15%"}, mention: []string{"evictionSoft", "nodefs.available"}},
		{name: "soft grace given for another signal", soft: kv{"memory.available": "1Gi"}, grace: kv{"nodefs.available": "1m"}, mention: []string{"evictionSoft", "memory.available"}},
		{name: "negative grace period", soft: kv{"memory.available": "1Gi"}, grace: kv{"memory.available": "-30s"}, mention: []string{"evictionSoftGracePeriod", "memory.available", "-30s"}},
		{name: "malformed grace period", soft: kv{"memory.available": "1Gi"}, grace: kv{"memory.available": "soon"}, mention: []string{"evictionSoftGracePeriod", "memory.available", "soon"}},
		{name: "zero minimum reclaim percentage", hard: kv{"nodefs.available": "10%"}, minClaim: kv{"nodefs.available": "0%"}, mention: []string{"evictionMinimumReclaim", "nodefs.available", "0%"}},
		{name: "negative minimum reclaim percentage", minClaim: kv{"nodefs.available": "-1%"}, mention: []string{"evictionMinimumReclaim", "nodefs.available", "-1%"}},
		{name: "negative minimum reclaim quantity", minClaim: kv{"memory.available": "-10Mi"}, mention: []string{"evictionMinimumReclaim", "memory.available", "-10Mi"}},
		{name: "malformed minimum reclaim quantity", minClaim: kv{"memory.available": "some"}, mention: []string{"evictionMinimumReclaim", "memory.available", "some"}},
		{name: "unknown signal in evictionHard", hard: kv{"memory.available": "1Gi", "swap.available": "1Gi"}, mention: []string{"evictionHard", "swap.available"}},
		{name: "unknown signal in evictionSoft", soft: kv{"cpu.available": "10%"}, grace: kv{}, mention: []string{"evictionSoft", "cpu.available"}},
		{name: "unknown signal in evictionSoftGracePeriod", grace: kv{"cpu.available": "1m"}, mention: []string{"evictionSoftGracePeriod", "cpu.available"}},
		{name: "unknown signal in evictionMinimumReclaim", minClaim: kv{"cpu.available": "1"}, mention: []string{"evictionMinimumReclaim", "cpu.available"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseThresholdConfig([]string{"pods"}, tc.hard, tc.soft, tc.grace, tc.minClaim)
			if err == nil {
				t.Fatalf("want an error, got thresholds %q", describeAll(got))
			}
			if got != nil {
				t.Errorf("want no thresholds with an error, got %q", describeAll(got))
			}
			for _, m := range tc.mention {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not mention %q", err, m)
				}
			}
		})
	}
}

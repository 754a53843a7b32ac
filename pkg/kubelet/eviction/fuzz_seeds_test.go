//evictkit:file fuzz

package eviction

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// The named seeds of FuzzDecide (testdata/fuzz/FuzzDecide/<name>) each
// promise, by their name, a path through the decision core: a kind of
// victim, a filesystem layout, a gate's behaviour. The fuzz input's
// encoding can change (a new signal, a new gate); when it does, a seed
// may quietly stop reaching its path. TestFuzzDecideSeedsReachTheirPath
// fails then, and
//
//	go test -run TestFuzzDecideSeedsReachTheirPath -regen-fuzz-seeds
//
// searches inputs (from a fixed random sequence) for the paths whose seed
// is missing or lost, and writes the shortest it finds. The encoding also
// differs between the patches of the series, and each patch's tree runs
// this test: search in the tree of the first patch whose test names the
// seed, then run the test in each later one.

var regenFuzzSeeds = flag.Bool("regen-fuzz-seeds", false, "rewrite the named FuzzDecide seeds that do not reach their path")

// fzPaths returns the paths a scenario's passes went through.
func fzPaths(s *fzScenario, ins []decideInput, outs []decision) map[string]bool {
	paths := map[string]bool{}
	layouts := map[layoutKind]string{layoutSingle: "single", layoutImageFs: "imagefs", layoutSplit: "split"}
	classes := map[rankClass]string{rankByMemory: "memory", rankByProcesses: "pids", rankByDiskBytes: "diskbytes", rankByDiskInodes: "inodes"}
	for pass, d := range outs {
		in := &ins[pass]
		if pass > 0 && len(d.storageVictims) == 0 {
			// A met threshold past its grace whose stats are no newer
			// than the previous pass's drives no eviction (PSI ones may
			// be settling after an eviction instead).
			for i, th := range in.thresholds {
				ob, ok := in.obs.get(th.Signal)
				last, seen := ins[pass-1].obs.get(th.Signal)
				if ok && seen && d.next.acting[i] && !refSignals[th.Signal].psi && !ob.time.IsZero() && ob.time.Equal(last.time) && d.target == nil {
					paths["stale-stats-no-target"] = true
				}
			}
		}
		for _, v := range d.storageVictims {
			paths["storage-"+strings.TrimSuffix(v.limit, ".limit")] = true
		}
		if len(d.storageVictims) > 1 {
			paths["storage-multi"] = true
		}
		if d.target == nil {
			if len(d.storageVictims) == 0 && len(d.conditions) > 0 {
				paths["conditions-only"] = true
			}
			for _, acting := range d.next.acting {
				if acting && len(d.storageVictims) == 0 {
					paths["acting-but-no-target"] = true
				}
			}
			continue
		}
		t := d.target
		for _, a := range t.actionable {
			if a.Signal == t.threshold.Signal && a.GracePeriod != t.threshold.GracePeriod {
				paths["actionable-same-signal-two-graces"] = true
			}
		}
		// The threshold relieved is below its level now, and another one
		// that comes earlier in the signal table acts only until its
		// minimum reclaim (ordered by the table alone, it would be first).
		if ob, ok := in.obs.get(t.threshold.Signal); ok && signalResource(t.threshold.Signal) != v1.ResourceMemory && signalBelow(t.threshold, ob, false) {
			at, _ := lookupSignal(t.threshold.Signal)
			for _, a := range t.actionable[1:] {
				pos, _ := lookupSignal(a.Signal)
				if ob, ok := in.obs.get(a.Signal); ok && pos < at && !signalBelow(a, ob, false) {
					paths["actionable-met-now-before-held"] = true
				}
			}
		}
		switch {
		case len(t.ranked) == 0:
			paths["target-no-pods"] = true
		case len(t.victims) == 0:
			paths["target-all-critical"] = true
		}
		if len(t.victims) == 0 {
			continue
		}
		grace := "hard"
		if !isHardEvictionThreshold(t.threshold) {
			grace = "soft"
		}
		paths[fmt.Sprintf("victim-%s-%s-%s", classes[t.class], grace, layouts[in.layout.kind()])] = true
		if t.threshold.Signal == "allocatableMemory.available" {
			paths["victim-allocatable"] = true
		}
		if ob, ok := in.obs.get(t.threshold.Signal); ok && pass > 0 && !signalBelow(t.threshold, ob, false) {
			paths["victim-minreclaim-later-pass"] = true
		}
		if t.victims[0].rank > 0 && t.ranked[0].critical {
			paths["victim-after-critical"] = true
		}
		if len(t.ranked) >= 5 {
			paths["victim-many-pods"] = true
		}
		if !t.ranked[t.victims[0].rank].hasStats {
			paths["victim-no-stats"] = true
		}
		for _, f := range fzAlphaFeatures {
			if f.targetPaths != nil {
				f.targetPaths(t, paths)
			}
		}
	}
	for _, f := range fzAlphaFeatures {
		if f.runPaths != nil {
			f.runPaths(ins, outs, paths)
		}
	}
	return paths
}

// fzDecidePromises are the core's paths that must each have a named seed
// (fzPromises adds the alpha features').
var fzDecidePromises = []string{
	"conditions-only",
	"acting-but-no-target",
	"storage-emptydirfs",
	"storage-ephemeralcontainerfs",
	"storage-ephemeralpodfs",
	"storage-multi",
	"target-no-pods",
	"target-all-critical",
	"victim-memory-hard-single",
	"victim-memory-hard-split",
	"victim-memory-soft-imagefs",
	"victim-allocatable",
	"victim-diskbytes-hard-single",
	"victim-diskbytes-hard-imagefs",
	"victim-diskbytes-hard-split",
	"victim-diskbytes-soft-imagefs",
	"victim-inodes-hard-single",
	"victim-inodes-hard-imagefs",
	"victim-inodes-soft-split",
	"victim-pids-hard-single",
	"victim-pids-soft-split",
	"victim-minreclaim-later-pass",
	"victim-after-critical",
	"victim-many-pods",
	"victim-no-stats",
	"stale-stats-no-target",
	"actionable-same-signal-two-graces",
	"actionable-met-now-before-held",
}

const fzDecideCorpus = "testdata/fuzz/FuzzDecide"

// fzRunPaths decodes and runs a FuzzDecide input and returns its paths.
func fzRunPaths(data []byte) map[string]bool {
	s := fzDecodeScenario(data)
	ins, outs := fzRun(s, fzIdentity)
	return fzPaths(s, ins, outs)
}

// readFuzzSeed reads a corpus file of one []byte argument.
func readFuzzSeed(path string) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(lines) != 2 || lines[0] != "go test fuzz v1" || !strings.HasPrefix(lines[1], "[]byte(") || !strings.HasSuffix(lines[1], ")") {
		return nil, fmt.Errorf("%s: not a corpus file of one []byte", path)
	}
	s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return []byte(s), nil
}

func writeFuzzSeed(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", data)), 0o644)
}

func TestFuzzDecideSeedsReachTheirPath(t *testing.T) {
	var lost []string
	for _, name := range fzPromises() {
		data, err := readFuzzSeed(filepath.Join(fzDecideCorpus, name))
		switch {
		case err != nil && !os.IsNotExist(err):
			t.Fatal(err)
		case err == nil && fzRunPaths(data)[name]:
			continue
		}
		lost = append(lost, name)
	}
	if len(lost) == 0 {
		return
	}
	if !*regenFuzzSeeds {
		t.Fatalf("the named seeds %v no longer reach the paths their names promise (or are missing); "+
			"rerun with -regen-fuzz-seeds to search new ones", lost)
	}
	found := fzSearchSeeds(lost, 3_000_000)
	for _, name := range lost {
		data, ok := found[name]
		if !ok {
			t.Errorf("no input reaching %s found", name)
			continue
		}
		if err := writeFuzzSeed(filepath.Join(fzDecideCorpus, name), data); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", name, len(data))
	}
}

// fzSearchSeeds tries random inputs from a fixed sequence until each
// wanted path is reached (or tries runs out), then shortens each input
// as far as it still reaches its path.
func fzSearchSeeds(want []string, tries int) map[string][]byte {
	rng := rand.New(rand.NewSource(1))
	found := map[string][]byte{}
	missing := map[string]bool{}
	for _, w := range want {
		missing[w] = true
	}
	for i := 0; i < tries && len(missing) > 0; i++ {
		data := make([]byte, 16+rng.Intn(400))
		rng.Read(data)
		for p := range fzRunPaths(data) {
			if missing[p] {
				found[p] = data
				delete(missing, p)
			}
		}
	}
	names := make([]string, 0, len(found))
	for name := range found {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		data := found[name]
		for n := len(data) - 1; n > 0; n-- {
			if !fzRunPaths(data[:n])[name] {
				break
			}
			data = data[:n]
		}
		found[name] = bytes.Clone(data)
	}
	return found
}

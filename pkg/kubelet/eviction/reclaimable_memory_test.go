//evictkit:file EvictionReclaimableMemory

package eviction

import (
	"context"
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// fileCounts are a memory cgroup's file page counts, in bytes.
type fileCounts struct{ active, inactive, dirty, writeback, mapped int64 }

// memcgWithFiles is a memory cgroup's files with these usage and file page
// counts, as cgroup v1 (hierarchical totals, with misleading local
// counts) or v2 names them.
func memcgWithFiles(v2 bool, usage int64, f fileCounts) map[string]string {
	if v2 {
		return map[string]string{
			"memory.current": i64s(usage) + "\n",
			"memory.stat": "anon 1\nfile 2\nactive_file " + i64s(f.active) + "\ninactive_file " + i64s(f.inactive) +
				"\nfile_mapped " + i64s(f.mapped) + "\nfile_dirty " + i64s(f.dirty) + "\nfile_writeback " + i64s(f.writeback) + "\n",
		}
	}
	return map[string]string{
		"memory.usage_in_bytes": i64s(usage) + "\n",
		"memory.stat": "cache 9\nmapped_file 999\ndirty 999\nactive_file 999\ninactive_file 999\n" +
			"total_active_file " + i64s(f.active) + "\ntotal_inactive_file " + i64s(f.inactive) +
			"\ntotal_mapped_file " + i64s(f.mapped) + "\ntotal_dirty " + i64s(f.dirty) + "\ntotal_writeback " + i64s(f.writeback) + "\n",
	}
}

// The working set under the reclaimable rule, on both hierarchies: usage
// less the clean unmapped file pages, never less than upstream's discount
// of the inactive ones, never below zero.
func TestReclaimableWorkingSet(t *testing.T) {
	for _, tc := range []struct {
		name  string
		usage int64
		files fileCounts
		want  int64
	}{
		{name: "clean cache, active and inactive, all dropped", usage: 1000, files: fileCounts{active: 600, inactive: 300}, want: 100},
		{name: "dirty pages stay", usage: 1000, files: fileCounts{active: 600, inactive: 300, dirty: 200}, want: 300},
		{name: "pages under writeback stay", usage: 1000, files: fileCounts{active: 600, inactive: 300, writeback: 100}, want: 200},
		{name: "mapped pages stay", usage: 1000, files: fileCounts{active: 600, inactive: 300, mapped: 250}, want: 350},
		{name: "never less than upstream's discount", usage: 1000, files: fileCounts{active: 100, inactive: 300, dirty: 350}, want: 700},
		{name: "never below zero", usage: 500, files: fileCounts{active: 600, inactive: 300}, want: 0},
		{name: "no file pages", usage: 1000, want: 1000},
	} {
		for _, v2 := range []bool{false, true} {
			name := tc.name + " (v1)"
			if v2 {
				name = tc.name + " (v2)"
			}
			t.Run(name, func(t *testing.T) {
				mount := t.TempDir()
				dir := writeCgroup(t, mount, "kubepods", memcgWithFiles(v2, tc.usage, tc.files))
				r := &memcgReader{mount: mount, v2: v2, reclaimable: true}
				if got, err := r.workingSet(dir); err != nil || got != tc.want {
					t.Errorf("reclaimable working set = %d, %v; want %d", got, err, tc.want)
				}
				r.reclaimable = false
				if got, err := r.workingSet(dir); err != nil || got != max(tc.usage-tc.files.inactive, 0) {
					t.Errorf("upstream's working set = %d, %v; want usage - inactive = %d", got, err, max(tc.usage-tc.files.inactive, 0))
				}
			})
		}
	}
	t.Run("a missing count is an error naming it", func(t *testing.T) {
		mount := t.TempDir()
		dir := writeCgroup(t, mount, "kubepods", map[string]string{
			"memory.usage_in_bytes": "100\n",
			"memory.stat":           "total_active_file 1\ntotal_inactive_file 2\ntotal_dirty 0\ntotal_writeback 0\n",
		})
		r := &memcgReader{mount: mount, reclaimable: true}
		if got, err := r.workingSet(dir); err == nil || !strings.Contains(err.Error(), "total_mapped_file") {
			t.Errorf("workingSet = %d, %v; want an error naming total_mapped_file", got, err)
		}
	})
}

// reclaimHarness is a manager with a memory.available<1Gi threshold whose
// Summary API counts a reader's 2.8Gi of active page cache as used (600Mi
// available of 8Gi), a bystander of 1.5Gi, and fake memory cgroups that
// say how much of the cache is clean.
type reclaimHarness struct {
	*mgrHarness
	mount             string
	reader, bystander *v1.Pod
}

const (
	reclaimUIDReader    = "0b9f8a52-6b7e-4d1c-9a57-1f2e3d4c5b6a"
	reclaimUIDBystander = "1c0a9b63-7c8f-4e2d-8b68-2a3f4e5d6c7b"
)

func newReclaimHarness(t *testing.T, gate bool) *reclaimHarness {
	t.Helper()
	setGateDuringTest(t, evictionReclaimableMemory, gate)
	reader, bystander := pod("reader"), pod("bystander")
	reader.UID, bystander.UID = reclaimUIDReader, reclaimUIDBystander
	cfg := mgrMemoryConfig()
	cfg.PodCgroupRoot = "kubepods"
	n := fakeHealthyNode()
	n.memAvail, n.memWS = 600*mi, 7*gi+424*mi
	h := &reclaimHarness{mgrHarness: mgrNewHarness(t, cfg, false, n.summary(mgrEpoch,
		fakePodStats(reader, fakePodUsage{memWS: []int64{3 * gi}, ephem: -1}),
		fakePodStats(bystander, fakePodUsage{memWS: []int64{1*gi + 512*mi}, ephem: -1}))),
		mount: t.TempDir(), reader: reader, bystander: bystander}
	h.pods = []*v1.Pod{reader, bystander}
	if gate {
		h.m.reclaim.reader = &memcgReader{mount: h.mount, podRoot: "kubepods", reclaimable: true}
	}
	return h
}

// cgroups writes the fake tree: the reader's cgroup with 3Gi of usage
// besides its inactive file pages (the Summary API's figure), the
// bystander's 1.5Gi of anon, and the node's root cgroup with the Summary
// API's working set, the reader's file pages, and outside bytes more of
// anon outside the pods.
func (h *reclaimHarness) cgroups(cache fileCounts, outside int64) {
	h.t.Helper()
	writeCgroup(h.t, h.mount, "", memcgWithFiles(false, 7*gi+424*mi+cache.inactive+outside, cache))
	writeCgroup(h.t, h.mount, "kubepods", memcgWithFiles(false, 4*gi+512*mi+cache.inactive, cache))
	writeCgroup(h.t, h.mount, "kubepods/besteffort/pod"+reclaimUIDReader, memcgWithFiles(false, 3*gi+cache.inactive, cache))
	writeCgroup(h.t, h.mount, "kubepods/besteffort/pod"+reclaimUIDBystander, memcgWithFiles(false, 1*gi+512*mi, fileCounts{}))
}

// With the gate, clean page cache is available memory: no pressure and no
// eviction where upstream evicts the reader; cache that is dirty or mapped
// still counts, and the ranking follows what each pod really holds.
func TestMgrReclaimableMemory(t *testing.T) {
	cache := fileCounts{active: 2*gi + 800*mi, inactive: 200 * mi}
	for _, tc := range []struct {
		name         string
		gate         bool
		cache        fileCounts
		outside      int64
		wantEvicted  []string
		wantPressure bool
		wantAvail    int64
	}{
		{name: "gate off: the Summary API's figures, the reader goes", cache: cache,
			wantEvicted: []string{"reader"}, wantPressure: true, wantAvail: 600 * mi},
		{name: "gate on, clean cache: no pressure", gate: true, cache: cache,
			wantAvail: 600*mi + 2*gi + 800*mi},
		{name: "gate on, the cache is dirty: as upstream", gate: true,
			cache:       fileCounts{active: cache.active, inactive: cache.inactive, dirty: 2*gi + 800*mi},
			wantEvicted: []string{"reader"}, wantPressure: true, wantAvail: 600 * mi},
		{name: "gate on, the cache is mapped: as upstream", gate: true,
			cache:       fileCounts{active: cache.active, inactive: cache.inactive, mapped: 2*gi + 800*mi},
			wantEvicted: []string{"reader"}, wantPressure: true, wantAvail: 600 * mi},
		{name: "gate on, clean cache, 2.5Gi more taken outside the pods: the bystander holds more", gate: true,
			cache: cache, outside: 2*gi + 512*mi,
			wantEvicted: []string{"bystander"}, wantPressure: true, wantAvail: 600*mi + 2*gi + 800*mi - 2*gi - 512*mi},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newReclaimHarness(t, tc.gate)
			h.cgroups(tc.cache, tc.outside)
			got := podNames(h.sync())
			if !reflect.DeepEqual(got, tc.wantEvicted) && !(len(got) == 0 && len(tc.wantEvicted) == 0) {
				t.Errorf("evicted %v, want %v", got, tc.wantEvicted)
			}
			if p := h.m.IsUnderMemoryPressure(); p != tc.wantPressure {
				t.Errorf("MemoryPressure = %v, want %v", p, tc.wantPressure)
			}
			ob, ok := h.m.state.lastObservations.get(evictionapi.SignalMemoryAvailable)
			if !ok || ob.available != tc.wantAvail {
				t.Errorf("memory.available observed %d (%v), want %d", ob.available, ok, tc.wantAvail)
			}
		})
	}
}

// Without readable cgroups the pass decides on the Summary API's figures,
// as upstream, rather than not at all.
func TestMgrReclaimableMemoryWithoutCgroups(t *testing.T) {
	h := newReclaimHarness(t, true)
	if got := podNames(h.sync()); !reflect.DeepEqual(got, []string{"reader"}) {
		t.Errorf("evicted %v, want [reader] as by the Summary API", got)
	}
}

// With the fast path on too, its reader uses the same rule.
func TestFastPathUsesReclaimableRule(t *testing.T) {
	for _, gate := range []bool{false, true} {
		setGateDuringTest(t, evictionFastPath, true)
		setGateDuringTest(t, evictionReclaimableMemory, gate)
		mount := t.TempDir()
		writeCgroup(t, mount, "", memcgWithFiles(false, 2*gi, fileCounts{}))
		h := mgrNewHarness(t, mgrMemoryConfig(), false, fakeHealthyNode().summary(mgrEpoch, []statsapi.PodStats{}...))
		h.m.fast.memcg = &memcgReader{mount: mount}
		ctx, cancel := context.WithCancel(context.Background())
		if !h.m.startFastPath(ctx, nil, h.activePods, nil) {
			cancel()
			t.Fatal("the fast path did not start")
		}
		cancel()
		if h.m.fast.memcg.reclaimable != gate {
			t.Errorf("EvictionReclaimableMemory %v: the fast path's reader has reclaimable = %v", gate, h.m.fast.memcg.reclaimable)
		}
	}
}

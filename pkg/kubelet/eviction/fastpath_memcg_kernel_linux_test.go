//evictkit:file EvictionFastPath
//go:build linux

package eviction

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// The fast path's cgroup readers on the real kernel (cgroup v1 on these
// hosts, v2 in the VM of make test-cgroupv2), on the layouts the kubelet
// makes with either cgroup driver: a memory hog runs in a container's
// cgroup, and each working set read is held to what the kernel itself
// reports for that cgroup: at least its anonymous memory (which is never
// inactive file), at most its usage, and, up the tree, each cgroup's
// working set at least its child's.
func TestMemcgReaderOnKernelLayouts(t *testing.T) {
	const (
		uid = "5f3e2d1c-0b9a-4876-a5b4-c3d2e1f0a9b8"
		cid = "4b6f0e1d2c3b4a5968778695a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5"
		hog = 64 << 20
	)
	layouts := []struct {
		name, podRoot, pod, container string
	}{
		{"cgroupfs driver", "kubepods", "kubepods/burstable/pod" + uid, cid},
		{"systemd driver", "kubepods.slice", "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + strings.ReplaceAll(uid, "-", "_") + ".slice", "cri-containerd-" + cid + ".scope"},
	}
	for _, l := range layouts {
		t.Run(l.name, func(t *testing.T) {
			cg := newTestCgroup(t, "")
			podDir := cg.child(t, l.pod)
			ctrDir := cg.child(t, l.pod+"/"+l.container)
			startChild(t, ctrDir, "memory-hog").waitReady(t, time.Minute)

			anon := "total_rss"
			if cg.v2 {
				anon = "anon"
			}
			// The kernel's figures move by a page now and then even with
			// the hog at rest, so they are read just before and just after
			// the reader and the looser of the two bounds applies.
			podsDir := cg.dir + "/" + l.podRoot
			dirs := []string{ctrDir, podDir, podsDir}
			type bounds struct{ lo, hi int64 }
			kernel := func() map[string]bounds {
				b := map[string]bounds{}
				for _, d := range dirs {
					b[d] = bounds{cgroupStat(t, d, anon), cg.usage(t, d)}
				}
				return b
			}
			before := kernel()
			r := &memcgReader{mount: cg.mount, v2: cg.v2, podRoot: strings.TrimPrefix(cg.dir, cg.mount+"/") + "/" + l.podRoot}
			f, err := r.readNode(time.Now(), true)
			if err != nil {
				t.Fatalf("readNode: %v", err)
			}
			after := kernel()
			within := func(what, dir string, got int64) {
				t.Helper()
				lo, hi := min(before[dir].lo, after[dir].lo), max(before[dir].hi, after[dir].hi)
				if got < lo || got > hi {
					t.Errorf("%s working set %d, the kernel's figures bound it to [%d (%s), %d (usage)]", what, got, lo, anon, hi)
				}
			}
			ctr, ok := f.containers[types.UID(uid)][cid]
			if !ok {
				t.Fatalf("no working set for container %s of pod %s: %v", cid, uid, f.containers)
			}
			if ctr < hog {
				t.Errorf("container working set %d below the %d bytes the hog touched", ctr, hog)
			}
			within("container", ctrDir, ctr)
			pod, ok := f.pod[types.UID(uid)]
			if !ok {
				t.Fatalf("no working set for pod %s: %v", uid, f.pod)
			}
			within("pod", podDir, pod)
			if !f.podsOK || !f.nodeOK {
				t.Fatalf("pods or node figure missing: %+v", f)
			}
			within("pods", podsDir, f.pods)
			if pod < ctr || f.pods < pod || f.node < f.pods {
				t.Errorf("working sets do not nest: node %d ≥ pods %d ≥ pod %d ≥ container %d", f.node, f.pods, pod, ctr)
			}
			if used := meminfoUsed(t); f.node > used {
				t.Errorf("node working set %d above what /proc/meminfo has in use (MemTotal - MemFree = %d)", f.node, used)
			}
			// The pods' cgroup limit, allocatable's capacity before a pass.
			if f.podsLimit != 0 {
				t.Errorf("pods' cgroup limit %d with none set, want 0", f.podsLimit)
			}
			limitFile := "memory.limit_in_bytes"
			if cg.v2 {
				limitFile = "memory.max"
			}
			cg.write(t, podsDir, limitFile, strconv.Itoa(1<<30))
			if g, err := r.readNode(time.Now(), false); err != nil || g.podsLimit != 1<<30 {
				t.Errorf("pods' cgroup limit %d (%v) after setting %s to 1Gi", g.podsLimit, err, limitFile)
			}
		})
	}
}

// meminfoUsed is MemTotal minus MemFree from /proc/meminfo, in bytes.
func meminfoUsed(t *testing.T) int64 {
	t.Helper()
	raw, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		t.Fatal(err)
	}
	field := func(name string) int64 {
		for line := range bytes.Lines(raw) {
			if rest, ok := bytes.CutPrefix(line, []byte(name+":")); ok {
				kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(string(rest)), " kB"), 10, 64)
				if err != nil {
					t.Fatalf("/proc/meminfo %s: %v", name, err)
				}
				return kb << 10
			}
		}
		t.Fatalf("/proc/meminfo has no %s", name)
		return 0
	}
	return field("MemTotal") - field("MemFree")
}

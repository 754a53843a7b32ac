//evictkit:file EvictionFastPath

package eviction

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/klog/v2"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// BenchmarkFastPathWatcherTick measures one tick of the fast path's
// watcher while nothing is wrong: read the node's and the pods' memory
// cgroups, derive the memory signals, compare them with the thresholds.
// cpu-s/idle-hour is the CPU time the watcher then spends per hour
// (ticks every fastPathInterval). "host" reads this machine's own memory
// cgroup hierarchy (root's memory.stat on cgroup v1 sums over every
// cgroup, so it is the costly case); "fake" a small tree in a temp dir.
func BenchmarkFastPathWatcherTick(b *testing.B) {
	thresholds := []evictionapi.Threshold{
		hard(evictionapi.SignalMemoryAvailable, "100Mi"),
		hard(evictionapi.SignalAllocatableMemoryAvailable, "100Mi"),
	}
	last := observations(
		ob{signal: sigMem, available: 1 << 40, capacity: 1 << 41},
		ob{signal: sigAlloc, available: 1 << 40, capacity: 1 << 41},
	)
	tick := func(b *testing.B, r *memcgReader) {
		if _, err := r.readNode(time.Now(), false); err != nil {
			b.Skipf("cannot read the memory cgroups at %s: %v", r.mount, err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			fresh, _ := r.readNode(time.Now(), false)
			obs, _ := withFreshMemory(last, nil, nil, fresh)
			if hardMemoryThresholdMet(thresholds, obs) {
				b.Fatal("threshold met on an idle node")
			}
		}
		perTick := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		b.ReportMetric(perTick*float64(time.Hour/fastPathInterval)/1e9, "cpu-s/idle-hour")
	}
	b.Run("fake", func(b *testing.B) {
		mount := b.TempDir()
		for _, rel := range []string{"", "kubepods"} {
			dir := filepath.Join(mount, rel)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				b.Fatal(err)
			}
			for name, content := range v1Memcg(8<<30, 1<<30) {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
					b.Fatal(err)
				}
			}
		}
		tick(b, &memcgReader{mount: mount, podRoot: "kubepods"})
	})
	b.Run("host", func(b *testing.B) {
		r, err := newNodeMemcgReader(klog.Background(), "")
		if err != nil {
			b.Skipf("no memory cgroup hierarchy: %v", err)
		}
		tick(b, r)
	})
}

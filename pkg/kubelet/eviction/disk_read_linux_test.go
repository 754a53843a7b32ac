//evictkit:file EvictionDiskFastPath
//go:build linux

package eviction

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// treeUsage against a real directory tree: blocks and inodes, each inode
// once, nothing for a tree that does not exist.
func TestTreeUsage(t *testing.T) {
	root := filepath.Join(t.TempDir(), "vol")
	if err := os.MkdirAll(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte(i)
	}
	if err := os.WriteFile(filepath.Join(root, "sub", "big"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "small"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	u, err := treeUsage(root)
	if err != nil {
		t.Fatal(err)
	}
	// root, sub, big, small.
	if u.inodes != 4 {
		t.Errorf("inodes %d, want 4", u.inodes)
	}
	if u.bytes < 1<<20 || u.bytes > 1<<20+64<<10 {
		t.Errorf("bytes %d, want the 1Mi file's blocks plus a few small ones", u.bytes)
	}

	// A hard link is the same inode: counted once.
	if err := os.Link(filepath.Join(root, "sub", "big"), filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if again, err := treeUsage(root); err != nil || again != u {
		t.Errorf("with a hard link: %+v, %v; want %+v, the same", again, err, u)
	}

	// A sparse file holds only the blocks written.
	f, err := os.Create(filepath.Join(root, "sparse"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if sparse, err := treeUsage(root); err != nil || sparse.bytes-u.bytes > 64<<10 || sparse.inodes != 5 {
		t.Errorf("with a 1Gi sparse file: %+v, %v; want one inode more and no more than a few blocks", sparse, err)
	}

	if none, err := treeUsage(filepath.Join(root, "missing")); err != nil || none != (diskUsage{}) {
		t.Errorf("a tree that does not exist: %+v, %v; want nothing, no error", none, err)
	}
}

func TestStatfsFigures(t *testing.T) {
	fs, err := statfsFigures(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if fs.capacity <= 0 || fs.available < 0 || fs.available > fs.capacity || fs.inodesFree > fs.inodes {
		t.Errorf("figures %+v: want 0 <= available <= capacity and inodesFree <= inodes", fs)
	}
	missing := filepath.Join(t.TempDir(), "missing")
	if _, err := statfsFigures(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("statfs of a missing path: %v, want an error naming it", err)
	}
}

// What one watcher tick costs: a statfs call.
func BenchmarkDiskWatcherTick(b *testing.B) {
	dir := b.TempDir()
	for b.Loop() {
		if _, err := statfsFigures(dir); err != nil {
			b.Fatal(err)
		}
	}
}

// What measuring the pods costs on a crossing: 110 pods (the kubelet's
// default maximum), each with an emptyDir of 20 files and a container
// log directory of 2.
func BenchmarkMeasurePods(b *testing.B) {
	root := b.TempDir()
	dirs := &fakeDirs{root: root}
	var pods []*v1.Pod
	for i := range 110 {
		p := pod(fmt.Sprintf("p%03d", i), withVolumes(emptyDirVol("scratch", "", "")))
		pods = append(pods, p)
		vol := filepath.Join(dirs.GetPodDir(p.UID), "volumes", "kubernetes.io~empty-dir", "scratch")
		logs := filepath.Join(dirs.PodLogsDir(p.Namespace, p.Name, p.UID), "app")
		for _, d := range []string{vol, logs} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				b.Fatal(err)
			}
		}
		for j := range 20 {
			if err := os.WriteFile(filepath.Join(vol, fmt.Sprint(j)), []byte("data"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		for j := range 2 {
			if err := os.WriteFile(filepath.Join(logs, fmt.Sprintf("%d.log", j)), []byte("log"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	w := &diskWatch{dirs: dirs, statfs: statfsFigures, usage: treeUsage}
	logger := klog.Background()
	for b.Loop() {
		if got := w.measurePods(logger, pods); len(got) != len(pods) {
			b.Fatalf("measured %d pods of %d", len(got), len(pods))
		}
	}
}

//evictkit:file EvictionFastPath

package eviction

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// writeCgroup writes the files of a fake memory cgroup at root/rel.
func writeCgroup(t *testing.T, root, rel string, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(root, rel)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func i64s(v int64) string { return strconv.FormatInt(v, 10) }

// v1Memcg is a cgroup v1 memory cgroup's usage and stat files. The
// non-hierarchical inactive_file must be ignored.
func v1Memcg(usage, totalInactive int64) map[string]string {
	return map[string]string{
		"memory.usage_in_bytes": i64s(usage) + "\n",
		"memory.stat": "cache 1\nrss 2\ninactive_file 999999\ntotal_cache 3\ntotal_rss 4\n" +
			"total_inactive_file " + i64s(totalInactive) + "\ntotal_active_file 5\n",
	}
}

// v2Memcg is a cgroup v2 memory cgroup's files; a negative current leaves
// memory.current out, as in the root cgroup.
func v2Memcg(current, anon, file, inactive int64) map[string]string {
	m := map[string]string{
		"memory.stat": "anon " + i64s(anon) + "\nfile " + i64s(file) + "\nkernel 100\n" +
			"inactive_anon 7\nactive_anon 8\ninactive_file " + i64s(inactive) + "\nactive_file 9\n",
	}
	if current >= 0 {
		m["memory.current"] = i64s(current) + "\n"
	}
	return m
}

const (
	uidA = "0b9f8a52-6b7e-4d1c-9a57-1f2e3d4c5b6a"
	uidB = "1c0a9b63-7c8f-4e2d-8b68-2a3f4e5d6c7b"
	uidC = "2d1bac74-8d90-4f3e-9c79-3b405f6e7d8c"
)

func TestMemcgWorkingSet(t *testing.T) {
	cases := []struct {
		name  string
		v2    bool
		root  bool // the cgroup is the mount's root
		files map[string]string
		want  int64
		err   string
	}{
		{name: "v1: usage minus total inactive file", files: v1Memcg(1000, 300), want: 700},
		{name: "v1: inactive above usage is zero", files: v1Memcg(100, 300), want: 0},
		{name: "v1: root cgroup the same", root: true, files: v1Memcg(5000, 1000), want: 4000},
		{name: "v2: current minus inactive file", v2: true, files: v2Memcg(1000, 600, 400, 250), want: 750},
		{name: "v2: root without memory.current: anon + file", v2: true, root: true, files: v2Memcg(-1, 600, 400, 250), want: 750},
		{name: "v2: root with memory.current uses it", v2: true, root: true, files: v2Memcg(2000, 600, 400, 250), want: 1750},
		{name: "v2: non-root without memory.current fails", v2: true, files: v2Memcg(-1, 600, 400, 250), err: "memory.current"},
		{name: "v1: no total_inactive_file", files: map[string]string{"memory.usage_in_bytes": "5\n", "memory.stat": "cache 1\n"}, err: "memory.stat has no total_inactive_file"},
		{name: "v1: usage not a number", files: map[string]string{"memory.usage_in_bytes": "lots\n", "memory.stat": "total_inactive_file 1\n"}, err: "memory.usage_in_bytes: not a number"},
		{name: "v1: stat value not a number", files: map[string]string{"memory.usage_in_bytes": "5\n", "memory.stat": "total_inactive_file x\n"}, err: "total_inactive_file"},
		{name: "no memory.stat", files: map[string]string{"memory.usage_in_bytes": "5\n"}, err: "memory.stat"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mount := t.TempDir()
			dir := mount
			if !tc.root {
				dir = writeCgroup(t, mount, "kubepods", nil)
			}
			writeCgroup(t, dir, "", tc.files)
			r := &memcgReader{mount: mount, v2: tc.v2}
			got, err := r.workingSet(dir)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("workingSet = %d, %v; want an error mentioning %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("workingSet = %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

func TestStatFieldMatchesWholeKeys(t *testing.T) {
	stat := []byte("total_inactive_file_extra 1\ninactive_file 2\ntotal_inactive_file 3")
	if v, err := statField(stat, "total_inactive_file"); err != nil || v != 3 {
		t.Errorf("total_inactive_file = %d, %v; want 3 (last line, no newline)", v, err)
	}
	if v, err := statField(stat, "inactive_file"); err != nil || v != 2 {
		t.Errorf("inactive_file = %d, %v; want 2", v, err)
	}
}

func TestPodCgroupUID(t *testing.T) {
	cases := []struct {
		name string
		want types.UID
		ok   bool
	}{
		{name: "pod" + uidA, want: uidA, ok: true},
		{name: "kubepods-pod" + strings.ReplaceAll(uidA, "-", "_") + ".slice", want: uidA, ok: true},
		{name: "kubepods-besteffort-pod" + strings.ReplaceAll(uidB, "-", "_") + ".slice", want: uidB, ok: true},
		{name: "besteffort"},
		{name: "kubepods-burstable.slice"},
		{name: "cri-containerd-0123456789abcdef.scope"},
		{name: "pod1234"},
		{name: "notapod" + uidA},
	}
	for _, tc := range cases {
		got, ok := podCgroupUID(tc.name)
		if got != tc.want || ok != tc.ok {
			t.Errorf("podCgroupUID(%q) = %q, %v; want %q, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

func TestMemcgReadNode(t *testing.T) {
	for _, driver := range []string{"cgroupfs", "systemd"} {
		t.Run(driver, func(t *testing.T) {
			mount := t.TempDir()
			writeCgroup(t, mount, "", v1Memcg(10000, 1000))
			podRoot, podDir := "kubepods", func(qos, uid string) string {
				if qos == "" {
					return "kubepods/pod" + uid
				}
				return "kubepods/" + qos + "/pod" + uid
			}
			if driver == "systemd" {
				podRoot = "kubepods.slice"
				podDir = func(qos, uid string) string {
					u := strings.ReplaceAll(uid, "-", "_")
					if qos == "" {
						return "kubepods.slice/kubepods-pod" + u + ".slice"
					}
					return "kubepods.slice/kubepods-" + qos + ".slice/kubepods-" + qos + "-pod" + u + ".slice"
				}
			}
			writeCgroup(t, mount, podRoot, v1Memcg(6000, 500))
			writeCgroup(t, mount, podRoot, map[string]string{"memory.limit_in_bytes": "8000\n"})
			writeCgroup(t, mount, podDir("", uidA), v1Memcg(1000, 100))
			writeCgroup(t, mount, podDir("burstable", uidB), v1Memcg(2000, 200))
			writeCgroup(t, mount, podDir("besteffort", uidC), v1Memcg(3000, 300))
			// Container cgroups inside a pod's are its containers, not pods.
			ctr := "/0123abc"
			if driver == "systemd" {
				ctr = "/cri-containerd-0123abc.scope"
			}
			writeCgroup(t, mount, podDir("besteffort", uidC)+ctr, v1Memcg(1500, 100))
			// A pod cgroup that vanished half-way is left out.
			writeCgroup(t, mount, podDir("besteffort", "3e2cbd85-9ea1-4a4f-8d8a-4c516a7f8e9d"), nil)

			r := &memcgReader{mount: mount, podRoot: podRoot}
			at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
			got, err := r.readNode(at, true)
			if err != nil {
				t.Fatalf("readNode: %v", err)
			}
			want := &freshMemory{at: at, node: 9000, nodeOK: true, pods: 5500, podsOK: true, podsLimit: 8000,
				pod:        map[types.UID]int64{uidA: 900, uidB: 1800, uidC: 2700},
				containers: map[types.UID]map[string]int64{uidC: {"0123abc": 1400}}}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("readNode = %+v, want %+v", got, want)
			}
			nodeOnly, err := r.readNode(at, false)
			if err != nil || nodeOnly.pod != nil || nodeOnly.node != 9000 {
				t.Errorf("readNode without pods = %+v, %v; want the node's figures only", nodeOnly, err)
			}
		})
	}
	t.Run("pods cgroup missing", func(t *testing.T) {
		mount := t.TempDir()
		writeCgroup(t, mount, "", v1Memcg(10000, 1000))
		r := &memcgReader{mount: mount, podRoot: "kubepods"}
		got, err := r.readNode(time.Time{}, true)
		if err == nil || !strings.Contains(err.Error(), "kubepods") {
			t.Errorf("want an error naming the pods' cgroup, got %v", err)
		}
		if !got.nodeOK || got.node != 9000 || got.podsOK {
			t.Errorf("readNode = %+v; want the node's figures, none for the pods", got)
		}
	})
}

// The pods' cgroup limit is allocatableMemory.available's capacity until
// a monitoring pass has observed one.
func TestMemcgMemoryLimit(t *testing.T) {
	for _, tc := range []struct {
		name    string
		v2      bool
		files   map[string]string
		want    int64
		wantErr string
	}{
		{name: "v1", files: map[string]string{"memory.limit_in_bytes": "6442450944\n"}, want: 6 << 30},
		{name: "v1 unlimited", files: map[string]string{"memory.limit_in_bytes": "9223372036854771712\n"}},
		{name: "v1 no limit file"},
		{name: "v1 garbage", files: map[string]string{"memory.limit_in_bytes": "lots\n"}, wantErr: `memory.limit_in_bytes: not a limit: "lots"`},
		{name: "v2", v2: true, files: map[string]string{"memory.max": "6442450944\n"}, want: 6 << 30},
		{name: "v2 max", v2: true, files: map[string]string{"memory.max": "max\n"}},
		{name: "v2 ignores v1's file", v2: true, files: map[string]string{"memory.limit_in_bytes": "100\n"}},
		{name: "v2 negative", v2: true, files: map[string]string{"memory.max": "-1\n"}, wantErr: `memory.max: not a limit: "-1"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeCgroup(t, t.TempDir(), "kubepods", tc.files)
			r := &memcgReader{v2: tc.v2}
			got, err := r.memoryLimit(dir)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("memoryLimit = %d, %v; want an error containing %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("memoryLimit = %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

func TestMemTotal(t *testing.T) {
	for _, tc := range []struct {
		name, meminfo string
		want          int64
		wantErr       string
	}{
		{name: "first line", meminfo: "MemTotal:       24573240 kB\nMemFree:  100 kB\n", want: 24573240 * 1024},
		{name: "later line", meminfo: "MemFree: 100 kB\nMemTotal: 2048 kB\n", want: 2 << 20},
		{name: "no final newline", meminfo: "MemTotal: 1 kB", want: 1024},
		{name: "missing", meminfo: "MemFree: 100 kB\n", wantErr: "no MemTotal line"},
		{name: "empty", meminfo: "", wantErr: "no MemTotal line"},
		{name: "not a number", meminfo: "MemTotal: lots kB\n", wantErr: `MemTotal: unexpected value "lots kB"`},
		{name: "no unit", meminfo: "MemTotal: 2048\n", wantErr: `MemTotal: unexpected value "2048"`},
		{name: "zero", meminfo: "MemTotal: 0 kB\n", wantErr: `MemTotal: unexpected value "0 kB"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := memTotal([]byte(tc.meminfo))
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("memTotal = %d, %v; want error %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("memTotal = %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

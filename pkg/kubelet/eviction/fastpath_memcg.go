//evictkit:file EvictionFastPath

package eviction

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// memcgReader reads memory working sets from the memory cgroup hierarchy
// for the fast path (EvictionFastPath): usage minus inactive file pages,
// as cAdvisor computes the Summary API's working set.
//
//	cgroup v1: memory.usage_in_bytes − total_inactive_file (memory.stat)
//	cgroup v2: memory.current − inactive_file; the root cgroup has no
//	           memory.current, so its usage is anon + file (memory.stat),
//	           as runc's cgroup library emulates it.
//
// It is safe for concurrent use; reads are serialized (they share a
// buffer).
type memcgReader struct {
	// mount is the memory controller's mount point; the node's root cgroup.
	mount string
	// v2 is set on the unified hierarchy.
	v2 bool
	// podRoot is the pods' cgroup, relative to mount (Config.PodCgroupRoot).
	podRoot string
	// capacity is the machine's memory in bytes (0 if unknown): what
	// memory.available is measured against until the monitoring loop has
	// observed the node's capacity.
	capacity int64
	//evictkit:begin EvictionReclaimableMemory
	// reclaimable: discount clean file pages, not only inactive ones
	// (reclaimable_memory.go).
	reclaimable bool
	//evictkit:end EvictionReclaimableMemory

	mu  sync.Mutex
	buf []byte
}

// onUnifiedHierarchy reports whether the memory controller mounted at
// mount is cgroup v2's (the unified hierarchy has cgroup.controllers).
func onUnifiedHierarchy(mount string) bool {
	_, err := os.Stat(filepath.Join(mount, "cgroup.controllers"))
	return err == nil
}

// workingSet returns the working set of the cgroup dir (absolute).
func (r *memcgReader) workingSet(dir string) (int64, error) {
	stat, err := r.read(filepath.Join(dir, "memory.stat"))
	if err != nil {
		return 0, err
	}
	// Everything needed from memory.stat is parsed before the next read
	// reuses the buffer.
	inactiveKey := "total_inactive_file"
	if r.v2 {
		inactiveKey = "inactive_file"
	}
	discount, err := statField(stat, inactiveKey)
	//evictkit:begin EvictionReclaimableMemory
	if r.reclaimable {
		discount, err = reclaimableFile(stat, r.v2)
	}
	//evictkit:end EvictionReclaimableMemory
	if err != nil {
		return 0, fmt.Errorf("%s: %w", dir, err)
	}
	if !r.v2 {
		usage, err := r.readInt(filepath.Join(dir, "memory.usage_in_bytes"))
		if err != nil {
			return 0, err
		}
		return workingSetOf(usage, discount), nil
	}
	var rootUsage int64
	var rootErr error
	if dir == r.mount {
		anon, errA := statField(stat, "anon")
		file, errF := statField(stat, "file")
		rootUsage, rootErr = anon+file, errors.Join(errA, errF)
	}
	usage, err := r.readInt(filepath.Join(dir, "memory.current"))
	if errors.Is(err, fs.ErrNotExist) && dir == r.mount {
		if rootErr != nil {
			return 0, fmt.Errorf("%s: %w", dir, rootErr)
		}
		usage, err = rootUsage, nil
	}
	if err != nil {
		return 0, err
	}
	return workingSetOf(usage, discount), nil
}

// memoryLimit returns the memory limit of the cgroup dir (absolute), as
// cAdvisor reads it for the Summary API's available bytes: 0 when the
// cgroup has none (a limit above 2^62 is none) or no limit file.
//
//	cgroup v1: memory.limit_in_bytes
//	cgroup v2: memory.max ("max": none)
func (r *memcgReader) memoryLimit(dir string) (int64, error) {
	name := "memory.limit_in_bytes"
	if r.v2 {
		name = "memory.max"
	}
	b, err := r.read(filepath.Join(dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	text := string(bytes.TrimSpace(b))
	if r.v2 && text == "max" {
		return 0, nil
	}
	v, err := strconv.ParseUint(text, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: not a limit: %q", filepath.Join(dir, name), text)
	}
	if v > 1<<62 {
		return 0, nil
	}
	return int64(v), nil
}

// workingSetOf is usage minus the file pages discounted, never below zero.
func workingSetOf(usage, discount int64) int64 {
	if discount > usage {
		return 0
	}
	return usage - discount
}

// readNode reads the node's and the pods' working sets at now; with pods
// set, each pod's too. A cgroup it cannot read is left out of the result
// (its ok flag unset, or no entry) and its error returned with the others.
func (r *memcgReader) readNode(now time.Time, pods bool) (*freshMemory, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := &freshMemory{at: now, capacity: r.capacity}
	var errs []error
	var err error
	if f.node, err = r.workingSet(r.mount); err == nil {
		f.nodeOK = true
	} else {
		errs = append(errs, err)
	}
	podsDir := filepath.Join(r.mount, r.podRoot)
	if r.podRoot != "" {
		if f.pods, err = r.workingSet(podsDir); err == nil {
			f.podsOK = true
		} else {
			errs = append(errs, err)
		}
		if f.podsLimit, err = r.memoryLimit(podsDir); err != nil {
			errs = append(errs, err)
		}
	}
	if pods && r.podRoot != "" {
		dirs, err := podCgroupDirs(podsDir)
		if err != nil {
			errs = append(errs, err)
		}
		f.pod = make(map[types.UID]int64, len(dirs))
		f.containers = make(map[types.UID]map[string]int64, len(dirs))
		for uid, dir := range dirs {
			ws, err := r.workingSet(dir)
			if err != nil {
				// The pod may have just ended.
				continue
			}
			f.pod[uid] = ws
			if cs := r.containerWorkingSets(dir); len(cs) > 0 {
				f.containers[uid] = cs
			}
		}
	}
	return f, errors.Join(errs...)
}

func (r *memcgReader) read(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if r.buf == nil {
		r.buf = make([]byte, 0, 8192)
	}
	b := bytes.NewBuffer(r.buf[:0])
	if _, err := b.ReadFrom(f); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	r.buf = b.Bytes()
	return r.buf, nil
}

func (r *memcgReader) readInt(path string) (int64, error) {
	b, err := r.read(path)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: not a number: %w", path, err)
	}
	return v, nil
}

// statField returns the value of key in a memory.stat file's contents.
func statField(stat []byte, key string) (int64, error) {
	for len(stat) > 0 {
		line := stat
		if i := bytes.IndexByte(stat, '\n'); i >= 0 {
			line, stat = stat[:i], stat[i+1:]
		} else {
			stat = nil
		}
		if len(line) <= len(key) || line[len(key)] != ' ' || string(line[:len(key)]) != key {
			continue
		}
		v, err := strconv.ParseInt(string(bytes.TrimSpace(line[len(key):])), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("memory.stat: %s: %w", key, err)
		}
		return v, nil
	}
	return 0, fmt.Errorf("memory.stat has no %s", key)
}

// containerWorkingSets reads the working sets of the container cgroups in
// a pod's cgroup, by container ID: "<id>" with the cgroupfs driver,
// "<runtime>-<id>.scope" with the systemd driver (cri-containerd-,
// crio-, docker-). Containers it cannot read are left out.
func (r *memcgReader) containerWorkingSets(podDir string) map[string]int64 {
	entries, err := os.ReadDir(podDir)
	if err != nil {
		return nil
	}
	out := map[string]int64{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		id := strings.TrimSuffix(e.Name(), ".scope")
		if i := strings.LastIndexByte(id, '-'); i >= 0 {
			id = id[i+1:]
		}
		if ws, err := r.workingSet(filepath.Join(podDir, e.Name())); err == nil {
			out[id] = ws
		}
	}
	return out
}

// podCgroupDirs finds the pod cgroups under the pods' cgroup, directly or
// in a QoS class cgroup: "pod<uid>" with the cgroupfs driver,
// "kubepods[-<qos>]-pod<uid with _ for ->.slice" with the systemd driver.
func podCgroupDirs(podsDir string) (map[types.UID]string, error) {
	out := map[types.UID]string{}
	var walk func(dir string, depth int) error
	walk = func(dir string, depth int) error {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			path := filepath.Join(dir, e.Name())
			if uid, ok := podCgroupUID(e.Name()); ok {
				out[uid] = path
				continue
			}
			if depth == 0 {
				// A QoS class cgroup (burstable, besteffort); errors
				// reading one are not worth failing the others for.
				_ = walk(path, depth+1)
			}
		}
		return nil
	}
	return out, walk(podsDir, 0)
}

// podCgroupUID returns the pod UID a pod cgroup's name carries.
func podCgroupUID(name string) (types.UID, bool) {
	name = strings.TrimSuffix(name, ".slice")
	i := strings.LastIndex(name, "pod")
	if i < 0 || (i > 0 && name[i-1] != '-') {
		return "", false
	}
	uid := strings.ReplaceAll(name[i+len("pod"):], "_", "-")
	// A UID as the API server makes them: 36 characters, dashes at 8, 13, 18, 23.
	if len(uid) != 36 || uid[8] != '-' || uid[13] != '-' || uid[18] != '-' || uid[23] != '-' {
		return "", false
	}
	return types.UID(uid), true
}

// memTotal returns MemTotal from the contents of /proc/meminfo, in bytes.
func memTotal(meminfo []byte) (int64, error) {
	for line := range bytes.Lines(meminfo) {
		rest, ok := bytes.CutPrefix(line, []byte("MemTotal:"))
		if !ok {
			continue
		}
		fields := strings.Fields(string(rest))
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, fmt.Errorf("MemTotal: unexpected value %q", strings.TrimSpace(string(rest)))
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil || kb <= 0 {
			return 0, fmt.Errorf("MemTotal: unexpected value %q", strings.TrimSpace(string(rest)))
		}
		return kb * 1024, nil
	}
	return 0, errors.New("no MemTotal line")
}

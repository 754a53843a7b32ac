package nodeharness

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// Observations are the node-level quantities the eviction signals are
// computed from, as the kubelet reports them in its Summary API. Test
// thresholds are set relative to them (upstream's node e2e does the same),
// so that a modest hog crosses them whatever the node's size.
type Observations struct {
	MemoryAvailable      int64 // memory.available, bytes
	MemoryCapacity       int64 // bytes
	PodsMemoryWorkingSet int64 // the "pods" cgroup's working set, bytes
	NodeFsAvailable      int64 // nodefs.available, bytes
	NodeFsInodesFree     int64 // nodefs.inodesFree
	ImageFsAvailable     int64 // imagefs.available, bytes
	ImageFsInodesFree    int64 // imagefs.inodesFree
	PIDAvailable         int64 // pid.available: task limit minus tasks
}

// Summary reads the kubelet's Summary API through the API server.
func (f *Framework) Summary(ctx context.Context) (*statsapi.Summary, error) {
	raw, err := f.Client.CoreV1().RESTClient().Get().Resource("nodes").Name(f.Node).
		SubResource("proxy").Suffix("stats/summary").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("node %s: reading the Summary API: %w", f.Node, err)
	}
	s := &statsapi.Summary{}
	if err := json.Unmarshal(raw, s); err != nil {
		return nil, fmt.Errorf("node %s: parsing the Summary API: %w", f.Node, err)
	}
	return s, nil
}

// PodMemoryWorkingSet is a pod's memory working set as the kubelet's
// Summary API reports it now, and whether it reports one. The eviction
// manager ranks pods on the same figures, so once this shows a size the
// kubelet's next ranking sees at least as recent a one.
func (f *Framework) PodMemoryWorkingSet(ctx context.Context, ns, pod string) (int64, bool, error) {
	s, err := f.Summary(ctx)
	if err != nil {
		return 0, false, err
	}
	for _, p := range s.Pods {
		if p.PodRef.Namespace == ns && p.PodRef.Name == pod && p.Memory != nil && p.Memory.WorkingSetBytes != nil {
			return int64(*p.Memory.WorkingSetBytes), true, nil
		}
	}
	return 0, false, nil
}

// PodEphemeralStorage is a pod's local ephemeral storage use as the
// kubelet's Summary API reports it now, and whether it reports one (the
// figures the eviction manager ranks disk signals on).
func (f *Framework) PodEphemeralStorage(ctx context.Context, ns, pod string) (int64, bool, error) {
	s, err := f.Summary(ctx)
	if err != nil {
		return 0, false, err
	}
	for _, p := range s.Pods {
		if p.PodRef.Namespace == ns && p.PodRef.Name == pod && p.EphemeralStorage != nil && p.EphemeralStorage.UsedBytes != nil {
			return int64(*p.EphemeralStorage.UsedBytes), true, nil
		}
	}
	return 0, false, nil
}

// Observe reads the node's current observations; every one must be there.
// The kubelet's figures are up to a housekeeping interval old: after the
// node stopped the pods of a deleted namespace, Observe waits (up to a
// minute) for memory figures taken since, so that what those pods held
// does not count.
func (f *Framework) Observe(ctx context.Context) (Observations, error) {
	var s *statsapi.Summary
	stale := false
	err := wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		var err error
		if s, err = f.Summary(ctx); err != nil {
			stale = false
			return false, err
		}
		stale = !takenAfter(s, f.podsStoppedAt)
		return !stale, nil
	})
	if err != nil && stale {
		return Observations{}, fmt.Errorf("node %s: no memory figures taken after %s, when the last test pods stopped, within 1m: %w",
			f.Node, f.podsStoppedAt.Format(time.RFC3339), err)
	} else if err != nil {
		return Observations{}, err
	}
	return observations(s)
}

// takenAfter reports whether the node's memory figures in s, and the pods
// cgroup's if s has them, were taken after t (always, for a zero t).
func takenAfter(s *statsapi.Summary, t time.Time) bool {
	if t.IsZero() {
		return true
	}
	if s.Node.Memory == nil || !s.Node.Memory.Time.After(t) {
		return false
	}
	for _, c := range s.Node.SystemContainers {
		if c.Name == statsapi.SystemContainerPods {
			return c.Memory == nil || c.Memory.Time.After(t)
		}
	}
	return true
}

func observations(s *statsapi.Summary) (Observations, error) {
	var o Observations
	var missing []string
	get := func(name string, v *uint64, dst *int64) {
		if v == nil {
			missing = append(missing, name)
			return
		}
		*dst = int64(*v)
	}
	n := s.Node
	if n.Memory != nil {
		get("node.memory.availableBytes", n.Memory.AvailableBytes, &o.MemoryAvailable)
		get("node.memory.workingSetBytes", n.Memory.WorkingSetBytes, new(int64))
		if n.Memory.AvailableBytes != nil && n.Memory.WorkingSetBytes != nil {
			o.MemoryCapacity = int64(*n.Memory.AvailableBytes + *n.Memory.WorkingSetBytes)
		}
	} else {
		missing = append(missing, "node.memory")
	}
	if n.Fs != nil {
		get("node.fs.availableBytes", n.Fs.AvailableBytes, &o.NodeFsAvailable)
		get("node.fs.inodesFree", n.Fs.InodesFree, &o.NodeFsInodesFree)
	} else {
		missing = append(missing, "node.fs")
	}
	if n.Runtime != nil && n.Runtime.ImageFs != nil {
		get("node.runtime.imageFs.availableBytes", n.Runtime.ImageFs.AvailableBytes, &o.ImageFsAvailable)
		get("node.runtime.imageFs.inodesFree", n.Runtime.ImageFs.InodesFree, &o.ImageFsInodesFree)
	} else {
		missing = append(missing, "node.runtime.imageFs")
	}
	if n.Rlimit != nil && n.Rlimit.MaxPID != nil && n.Rlimit.NumOfRunningProcesses != nil {
		o.PIDAvailable = *n.Rlimit.MaxPID - *n.Rlimit.NumOfRunningProcesses
	} else {
		missing = append(missing, "node.rlimit")
	}
	for _, c := range n.SystemContainers {
		if c.Name == statsapi.SystemContainerPods && c.Memory != nil && c.Memory.WorkingSetBytes != nil {
			o.PodsMemoryWorkingSet = int64(*c.Memory.WorkingSetBytes)
		}
	}
	if len(missing) > 0 {
		return o, fmt.Errorf("the Summary API lacks %v", missing)
	}
	return o, nil
}

// Where the node's filesystems are: nodefs holds the kubelet's root
// directory, imagefs containerd's (the same filesystem unless the node has
// a dedicated image filesystem).
const (
	NodeFsDir  = kubeletRootDir
	ImageFsDir = "/var/lib/containerd"
)

// Statfs reads the free bytes of the filesystems holding dirs on the node
// itself (statfs, what an unprivileged user may use), in one call and in
// the order of dirs: what the Summary API reports once its figures catch
// up, which takes seconds after a change.
func (f *Framework) Statfs(ctx context.Context, dirs ...string) ([]int64, error) {
	if len(dirs) == 0 {
		return nil, fmt.Errorf("node %s: statfs of no directory", f.Node)
	}
	out, err := f.Exec(ctx, append([]string{"stat", "--file-system", "--format", "%a %S"}, dirs...)...)
	if err != nil {
		return nil, err
	}
	free, err := parseStatfs(out, len(dirs))
	if err != nil {
		return nil, fmt.Errorf("node %s: statfs of %v: %w", f.Node, dirs, err)
	}
	return free, nil
}

// parseStatfs parses want lines of stat's "%a %S" (free blocks for
// unprivileged users, block size) into bytes.
func parseStatfs(out string, want int) ([]int64, error) {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != want {
		return nil, fmt.Errorf("parsing statfs output %q: want %d lines, got %d", out, want, len(lines))
	}
	free := make([]int64, len(lines))
	for i, line := range lines {
		var blocks, size int64
		if n, err := fmt.Sscanf(line, "%d %d", &blocks, &size); err != nil || n != 2 || blocks < 0 || size <= 0 {
			return nil, fmt.Errorf("parsing statfs output line %q: want \"<free blocks> <block size>\"", line)
		}
		free[i] = blocks * size
	}
	return free, nil
}

// fsStatsTolerance is how far the kubelet's nodefs.available and
// imagefs.available may be from the filesystems' own figures when nothing
// writes to them.
const fsStatsTolerance = 8 * Mi

// FsStatsCurrent returns nil once the kubelet's nodefs.available and
// imagefs.available are within fsStatsTolerance of what statfs reports,
// and an error with both figures until then. The kubelet's figures lag
// changes by seconds, and one taken just after images were removed can be
// hundreds of MiB off: thresholds set from it would be too.
func (f *Framework) FsStatsCurrent(ctx context.Context) error {
	obs, err := f.Observe(ctx)
	if err != nil {
		return err
	}
	free, err := f.Statfs(ctx, NodeFsDir, ImageFsDir)
	if err != nil {
		return err
	}
	for _, fs := range []struct {
		name            string
		kubelet, statfs int64
	}{
		{"nodefs", obs.NodeFsAvailable, free[0]},
		{"imagefs", obs.ImageFsAvailable, free[1]},
	} {
		if d := fs.kubelet - fs.statfs; d > fsStatsTolerance || d < -fsStatsTolerance {
			return fmt.Errorf("node %s: the kubelet reports %d bytes free on %s, statfs %d", f.Node, fs.kubelet, fs.name, fs.statfs)
		}
	}
	return nil
}

// DedicatedImageFs reports whether containerd's directory is on another
// filesystem than the kubelet's: the kubelet then has a dedicated image
// filesystem, with imagefs signals of its own.
func (f *Framework) DedicatedImageFs(ctx context.Context) (bool, error) {
	out, err := f.Exec(ctx, "stat", "--format", "%d", NodeFsDir, ImageFsDir)
	if err != nil {
		return false, err
	}
	devices := strings.Fields(out)
	if len(devices) != 2 {
		return false, fmt.Errorf("node %s: parsing the devices of %s and %s: %q", f.Node, NodeFsDir, ImageFsDir, out)
	}
	return devices[0] != devices[1], nil
}

// CgroupV2 reports whether the node runs on the unified cgroup hierarchy
// (the cgroup v2 VM node) rather than cgroup v1 (the kind nodes here).
func (f *Framework) CgroupV2(ctx context.Context) (bool, error) {
	out, err := f.Exec(ctx, "stat", "-f", "-c", "%T", "/sys/fs/cgroup")
	if err != nil {
		return false, err
	}
	return strings.TrimSpace(out) == "cgroup2fs", nil
}

package parity

import (
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// world is the node as one manager's actions leave it: which pods it has
// killed and what image and container GC have freed. Each manager under
// test has its own world, so that its own kills relieve its own pressure.
type world struct {
	s              *Scenario
	dead           map[types.UID]bool
	images, layers FsUse // what GC can still free
	lastStats      time.Time
}

func newWorld(s *Scenario) *world {
	return &world{s: s, dead: map[types.UID]bool{}, images: s.Node.ImageGCFrees, layers: s.Node.ContainerGCFrees}
}

// alive lists the pods not yet killed, in the order of perm.
func (w *world) alive(perm []int) []*v1.Pod {
	var out []*v1.Pod
	for _, i := range perm {
		if p := w.s.Pods[i]; !w.dead[p.UID] {
			out = append(out, p)
		}
	}
	return out
}

// fsTotals is what one filesystem holds.
type fsTotals struct{ used, inodes int64 }

func (t *fsTotals) add(u FsUse) { t.used, t.inodes = t.used+u.Bytes, t.inodes+u.Inodes }

// summary is what the Summary API reports for pass p at time now.
func (w *world) summary(p *Pass, now time.Time) *statsapi.Summary {
	at := now
	if p.StaleStats && !w.lastStats.IsZero() {
		at = w.lastStats
	}
	w.lastStats = at
	ts := metav1.NewTime(at)
	s, lay := w.s, w.s.Layout

	var nodeFs, imageFs fsTotals
	// Without a dedicated imagefs, System.NodeFs covers the images too.
	nodeFs.add(p.System.NodeFs)
	imageFs.add(p.System.ImageFs)
	// Where images and containers' writable layers live.
	imagesOn, layersOn := &nodeFs, &nodeFs
	if lay.DedicatedImageFs {
		imagesOn = &imageFs
		if !lay.SplitContainerFs {
			layersOn = &imageFs
		}
	}
	imagesOn.add(w.images)
	layersOn.add(w.layers)

	var podMem, procs int64
	var pods []statsapi.PodStats
	for i, pod := range s.Pods {
		u, ok := p.Pods[i]
		if !ok || w.dead[pod.UID] {
			continue
		}
		ps := statsapi.PodStats{
			PodRef:       statsapi.PodReference{Name: pod.Name, Namespace: pod.Namespace, UID: string(pod.UID)},
			StartTime:    metav1.NewTime(time.Unix(0, 0)),
			ProcessStats: &statsapi.ProcessStats{ProcessCount: ptr(uint64(u.Processes))},
		}
		var mem, eph int64
		var ephInodes int64
		for _, c := range u.Containers {
			ps.Containers = append(ps.Containers, statsapi.ContainerStats{
				Name:      c.Name,
				StartTime: metav1.NewTime(time.Unix(0, 0)),
				Memory:    &statsapi.MemoryStats{Time: ts, WorkingSetBytes: ptr(uint64(c.WorkingSet)), UsageBytes: ptr(uint64(c.WorkingSet))},
				Rootfs:    fsStats(ts, c.Rootfs),
				Logs:      fsStats(ts, c.Logs),
			})
			mem += c.WorkingSet
			eph, ephInodes = eph+c.Rootfs.Bytes+c.Logs.Bytes, ephInodes+c.Rootfs.Inodes+c.Logs.Inodes
			layersOn.add(c.Rootfs)
			nodeFs.add(c.Logs)
		}
		for _, v := range pod.Spec.Volumes {
			vu := u.Volumes[v.Name]
			ps.VolumeStats = append(ps.VolumeStats, statsapi.VolumeStats{Name: v.Name, FsStats: *fsStats(ts, vu)})
			if v.EmptyDir.Medium == v1.StorageMediumMemory {
				mem += vu.Bytes
				continue
			}
			eph, ephInodes = eph+vu.Bytes, ephInodes+vu.Inodes
			nodeFs.add(vu)
		}
		ps.Memory = &statsapi.MemoryStats{Time: ts, WorkingSetBytes: ptr(uint64(mem)), UsageBytes: ptr(uint64(mem))}
		ps.EphemeralStorage = fsStats(ts, FsUse{Bytes: eph, Inodes: ephInodes})
		podMem += mem
		procs += u.Processes
		pods = append(pods, ps)
	}

	nodeWS := p.System.Memory + podMem
	nodeFsStats := fsCapacity(ts, s.Node.NodeFs, nodeFs)
	imageFsStats := nodeFsStats
	if lay.DedicatedImageFs {
		imageFsStats = fsCapacity(ts, s.Node.ImageFs, imageFs)
	}
	containerFsStats := imageFsStats
	if lay.SplitContainerFs {
		containerFsStats = nodeFsStats
	}
	return &statsapi.Summary{
		Node: statsapi.NodeStats{
			NodeName:  "node",
			StartTime: metav1.NewTime(time.Unix(0, 0)),
			Memory: &statsapi.MemoryStats{Time: ts,
				AvailableBytes:  ptr(uint64(max(0, s.Node.Memory-nodeWS))),
				WorkingSetBytes: ptr(uint64(nodeWS)), UsageBytes: ptr(uint64(nodeWS))},
			SystemContainers: []statsapi.ContainerStats{{
				Name: statsapi.SystemContainerPods, StartTime: metav1.NewTime(time.Unix(0, 0)),
				Memory: &statsapi.MemoryStats{Time: ts,
					AvailableBytes:  ptr(uint64(max(0, s.Node.Allocatable-podMem))),
					WorkingSetBytes: ptr(uint64(podMem)), UsageBytes: ptr(uint64(podMem))},
			}},
			Fs:      nodeFsStats,
			Runtime: &statsapi.RuntimeStats{ImageFs: imageFsStats, ContainerFs: containerFsStats},
			Rlimit: &statsapi.RlimitStats{Time: ts, MaxPID: ptr(s.Node.MaxPID),
				NumOfRunningProcesses: ptr(p.System.Processes + procs)},
		},
		Pods: pods,
	}
}

func fsStats(ts metav1.Time, u FsUse) *statsapi.FsStats {
	return &statsapi.FsStats{Time: ts, UsedBytes: ptr(uint64(u.Bytes)), InodesUsed: ptr(uint64(u.Inodes))}
}

func fsCapacity(ts metav1.Time, c Fs, t fsTotals) *statsapi.FsStats {
	return &statsapi.FsStats{Time: ts,
		CapacityBytes: ptr(uint64(c.Bytes)), AvailableBytes: ptr(uint64(max(0, c.Bytes-t.used))), UsedBytes: ptr(uint64(t.used)),
		Inodes: ptr(uint64(c.Inodes)), InodesFree: ptr(uint64(max(0, c.Inodes-t.inodes))), InodesUsed: ptr(uint64(t.inodes)),
	}
}

func ptr[T any](v T) *T { return &v }

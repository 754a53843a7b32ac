//evictkit:file EvictionDiskFastPath

package eviction

import (
	"reflect"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

var (
	sigNodeInodes  = evictionapi.SignalNodeFsInodesFree
	sigImageFs     = evictionapi.SignalImageFsAvailable
	sigImageInodes = evictionapi.SignalImageFsInodesFree
	sigCtrInodes   = evictionapi.SignalContainerFsInodesFree
)

// Which filesystem's fresh figures each disk signal takes, per layout.
func TestWithFreshDiskSignals(t *testing.T) {
	at := t0.Add(3 * time.Second)
	old := ob{available: 50 << 30, capacity: 100 << 30, at: t0}
	var last []ob
	for _, s := range []evictionapi.Signal{sigMem, sigNodeFs, sigNodeInodes, sigImageFs, sigImageInodes, sigCtrFs, sigCtrInodes} {
		o := old
		o.signal = s
		last = append(last, o)
	}
	node := &fsFigures{capacity: 10 << 30, available: 1 << 30, inodes: 1000, inodesFree: 10}
	image := &fsFigures{capacity: 20 << 30, available: 2 << 30, inodes: 2000, inodesFree: 20}
	nodeBytes := observation{available: 1 << 30, capacity: 10 << 30, time: at}
	nodeInodes := observation{available: 10, capacity: 1000, time: at}
	imageBytes := observation{available: 2 << 30, capacity: 20 << 30, time: at}
	imageInodes := observation{available: 20, capacity: 2000, time: at}
	unchanged := observation{available: 50 << 30, capacity: 100 << 30, time: t0}

	for _, tc := range []struct {
		name   string
		layout fsLayout
		fresh  freshDisk
		want   map[evictionapi.Signal]observation
	}{
		{"one filesystem: every disk signal from nodefs", singleFs, freshDisk{at: at, nodeFs: node},
			map[evictionapi.Signal]observation{sigNodeFs: nodeBytes, sigNodeInodes: nodeInodes, sigImageFs: nodeBytes, sigImageInodes: nodeInodes, sigCtrFs: nodeBytes, sigCtrInodes: nodeInodes}},
		{"dedicated image filesystem: images and writable layers from it", dedicatedFs, freshDisk{at: at, nodeFs: node, imageFs: image},
			map[evictionapi.Signal]observation{sigNodeFs: nodeBytes, sigNodeInodes: nodeInodes, sigImageFs: imageBytes, sigImageInodes: imageInodes, sigCtrFs: imageBytes, sigCtrInodes: imageInodes}},
		{"split: writable layers on nodefs", splitFs, freshDisk{at: at, nodeFs: node, imageFs: image},
			map[evictionapi.Signal]observation{sigNodeFs: nodeBytes, sigNodeInodes: nodeInodes, sigImageFs: imageBytes, sigImageInodes: imageInodes, sigCtrFs: nodeBytes, sigCtrInodes: nodeInodes}},
		{"dedicated image filesystem not read: its signals keep their observations", dedicatedFs, freshDisk{at: at, nodeFs: node},
			map[evictionapi.Signal]observation{sigNodeFs: nodeBytes, sigNodeInodes: nodeInodes, sigImageFs: unchanged, sigImageInodes: unchanged, sigCtrFs: unchanged, sigCtrInodes: unchanged}},
		{"nodefs not read", singleFs, freshDisk{at: at},
			map[evictionapi.Signal]observation{sigNodeFs: unchanged, sigImageFs: unchanged, sigCtrInodes: unchanged}},
		{"a filesystem without inodes: inode signals keep their observations", singleFs, freshDisk{at: at, nodeFs: &fsFigures{capacity: 10 << 30, available: 1 << 30}},
			map[evictionapi.Signal]observation{sigNodeFs: nodeBytes, sigNodeInodes: unchanged, sigImageInodes: unchanged}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := observations(last...)
			obs, _ := withFreshDisk(in, nil, nil, &tc.fresh, tc.layout)
			for s, want := range tc.want {
				if got := mustGet(t, obs, s); got != want {
					t.Errorf("%s = %+v, want %+v", s, got, want)
				}
			}
			if got := mustGet(t, obs, sigMem); got != unchanged {
				t.Errorf("memory.available = %+v, want it unchanged", got)
			}
			if got := mustGet(t, in, sigNodeFs); got != unchanged {
				t.Error("the input observations changed")
			}
		})
	}
	t.Run("no observations before", func(t *testing.T) {
		obs, _ := withFreshDisk(nil, nil, nil, &freshDisk{at: at, nodeFs: node}, singleFs)
		if got := mustGet(t, obs, sigNodeFs); got != nodeBytes {
			t.Errorf("nodefs.available = %+v, want %+v", got, nodeBytes)
		}
	})
}

func TestWithFreshDiskPodStats(t *testing.T) {
	at := t0.Add(3 * time.Second)
	writer := pod("writer", withContainers(v1.Container{Name: "app"}, v1.Container{Name: "sidecar"}),
		withVolumes(emptyDirVol("scratch", "", ""), emptyDirVol("cache", "", "")))
	idle, fresh := pod("idle"), pod("fresh")
	stats := statsIndex(
		podStats("writer", withVolumeStats("scratch", 1<<20, 1), withContainerStats(cStats("app", cRootfs(5<<20, 5), cLogs(1<<10, 1)))),
		podStats("idle", withVolumeStats("data", 500<<20, 10)),
	)
	f := &freshDisk{at: at, pod: map[types.UID]podDiskUsage{
		writer.UID: {
			volumes: map[string]diskUsage{"scratch": {bytes: 3 << 30, inodes: 2}, "cache": {bytes: 4 << 10, inodes: 1}},
			logs:    map[string]diskUsage{"app": {bytes: 8 << 10, inodes: 2}, "sidecar": {bytes: 4 << 10, inodes: 2}},
		},
		fresh.UID: {volumes: map[string]diskUsage{"scratch": {bytes: 1 << 20, inodes: 1}}},
	}}

	_, merged := withFreshDisk(nil, stats, []*v1.Pod{writer, idle, fresh}, f, singleFs)

	w := merged.lookup(writer)
	vols := map[string][2]int64{}
	for _, v := range w.VolumeStats {
		b, i := fsUsage(&v.FsStats)
		vols[v.Name] = [2]int64{b, i}
		if !v.Time.Time.Equal(at) {
			t.Errorf("volume %s stamped %v, want the fresh time", v.Name, v.Time)
		}
	}
	if want := map[string][2]int64{"scratch": {3 << 30, 2}, "cache": {4 << 10, 1}}; !reflect.DeepEqual(vols, want) {
		t.Errorf("writer's volumes %v, want %v (scratch replaced, cache added)", vols, want)
	}
	if len(w.Containers) != 2 || w.Containers[0].Name != "app" || w.Containers[1].Name != "sidecar" {
		t.Fatalf("writer's containers %+v, want app (kept) and sidecar (added)", w.Containers)
	}
	if b, _ := fsUsage(w.Containers[0].Rootfs); b != 5<<20 {
		t.Errorf("app's writable layer %d, want the Summary API's 5Mi", b)
	}
	if a, s := u64(w.Containers[0].Logs.UsedBytes), u64(w.Containers[1].Logs.UsedBytes); a != 8<<10 || s != 4<<10 {
		t.Errorf("logs %d, %d; want the fresh 8Ki and 4Ki", a, s)
	}
	if b, _ := localStorageUsage(writer, w, usageParts{rootfs: true, logs: true, volumes: true}); b != 3<<30+4<<10+5<<20+8<<10+4<<10 {
		t.Errorf("writer's local storage %d by the ranking's sum", b)
	}
	if merged.lookup(idle) != stats.lookup(idle) {
		t.Error("idle's stats were replaced though it was not measured")
	}
	if s := merged.lookup(fresh); s == nil || s.PodRef.Name != "fresh" || s.PodRef.UID != string(fresh.UID) || len(s.VolumeStats) != 1 {
		t.Errorf("a pod the Summary API lacks: stats %+v, want its reference and fresh volume", s)
	}
	// The inputs are untouched.
	if b, _ := fsUsage(&stats.lookup(writer).VolumeStats[0].FsStats); b != 1<<20 || len(stats.lookup(writer).VolumeStats) != 1 {
		t.Error("the input volume stats changed")
	}
	if u64(stats.lookup(writer).Containers[0].Logs.UsedBytes) != 1<<10 || len(stats.lookup(writer).Containers) != 1 {
		t.Error("the input container stats changed")
	}

	t.Run("no pod measured: the stats as they were", func(t *testing.T) {
		_, got := withFreshDisk(nil, stats, []*v1.Pod{writer}, &freshDisk{at: at}, singleFs)
		if !reflect.DeepEqual(got, stats) {
			t.Error("stats changed without fresh pod figures")
		}
	})
}

func TestHardDiskThresholdMet(t *testing.T) {
	obs := observations(
		ob{signal: sigMem, available: 0, capacity: 8 << 30, at: t0},
		ob{signal: sigNodeFs, available: 2 << 30, capacity: 100 << 30, at: t0},
		ob{signal: sigNodeInodes, available: 50, capacity: 1000, at: t0},
	)
	for _, tc := range []struct {
		name       string
		thresholds []evictionapi.Threshold
		want       bool
	}{
		{"hard nodefs threshold met", []evictionapi.Threshold{hard(sigNodeFs, "3Gi")}, true},
		{"hard nodefs threshold not met", []evictionapi.Threshold{hard(sigNodeFs, "1Gi")}, false},
		{"hard inodes threshold met", []evictionapi.Threshold{hard(sigNodeInodes, "100")}, true},
		{"soft threshold met: the monitoring loop's", []evictionapi.Threshold{soft(sigNodeFs, "3Gi", time.Minute)}, false},
		{"memory threshold met: not a disk signal", []evictionapi.Threshold{hard(sigMem, "1Gi")}, false},
		{"signal not observed", []evictionapi.Threshold{hard(sigImageFs, "3Gi")}, false},
	} {
		if got := hardDiskThresholdMet(tc.thresholds, obs); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
		if got := hasHardDiskThreshold(tc.thresholds); got != (tc.name != "soft threshold met: the monitoring loop's" && tc.name != "memory threshold met: not a disk signal") {
			t.Errorf("%s: hasHardDiskThreshold %v", tc.name, got)
		}
	}
}

//evictkit:file EvictionDiskFastPath

package eviction

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2/ktesting"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// fakeDirs lays the kubelet's directories out under root, as the kubelet
// does under its own, and answers the layout questions.
type fakeDirs struct {
	fakeDiskInfo
	root string
}

var _ localStorageDirs = &fakeDirs{}

func (d *fakeDirs) NodeFsDir() string { return d.root }
func (d *fakeDirs) ImageFsDir(context.Context) (string, error) {
	return filepath.Join(d.root, "images"), nil
}
func (d *fakeDirs) GetPodDir(uid types.UID) string { return filepath.Join(d.root, "pods", string(uid)) }
func (d *fakeDirs) PodLogsDir(namespace, name string, uid types.UID) string {
	return filepath.Join(d.root, "logs", namespace+"_"+name+"_"+string(uid))
}

// fakeFilesystems are statfs figures and tree usages by path, set by the
// test; a tree not set holds nothing, a filesystem not set cannot be read.
type fakeFilesystems struct {
	mu    sync.Mutex
	fs    map[string]fsFigures
	trees map[string]diskUsage
	walks int
}

func (f *fakeFilesystems) statfs(dir string) (fsFigures, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fs, ok := f.fs[dir]
	if !ok {
		return fsFigures{}, errors.New("statfs " + dir + ": no such filesystem")
	}
	return fs, nil
}

func (f *fakeFilesystems) usage(dir string) (diskUsage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.walks++
	return f.trees[dir], nil
}

func (f *fakeFilesystems) set(dir string, fs fsFigures) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fs[dir] = fs
}

func (f *fakeFilesystems) setTree(dir string, u diskUsage) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.trees[dir] = u
}

// diskHarness is a manager with EvictionDiskFastPath on, a hard
// nodefs.available<1Gi threshold (500Mi minimum reclaim) on one
// filesystem of 100Gi, and fake filesystems.
type diskHarness struct {
	*mgrHarness
	dirs *fakeDirs
	fs   *fakeFilesystems
	mu   sync.Mutex
	gone map[types.UID]bool
}

func newDiskHarness(t *testing.T, pods []*v1.Pod, st []statsapi.PodStats) *diskHarness {
	t.Helper()
	setGateDuringTest(t, evictionDiskFastPath, true)
	cfg := mgrDiskConfig()
	cfg.Thresholds = cfg.Thresholds[:1]
	h := &diskHarness{
		mgrHarness: mgrNewHarness(t, cfg, false, fakeHealthyNode().summary(mgrEpoch, st...)),
		dirs:       &fakeDirs{root: "/var/lib/kubelet"},
		fs:         &fakeFilesystems{fs: map[string]fsFigures{}, trees: map[string]diskUsage{}},
		gone:       map[types.UID]bool{},
	}
	h.pods = pods
	h.fs.set(h.dirs.root, fsFigures{capacity: 100 * gi, available: 80 * gi, inodes: 1000000, inodesFree: 900000})
	h.m.fast.disk = &diskWatch{dirs: h.dirs, nodeFsDir: h.dirs.root, statfs: h.fs.statfs, usage: h.fs.usage}
	h.m.fast.watching[conditionIndex(v1.NodeDiskPressure)] = true
	h.m.fast.podCleanedUp = func(p *v1.Pod) bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.gone[p.UID]
	}
	return h
}

func (h *diskHarness) cleanedUp(p *v1.Pod) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.gone[p.UID] = true
}

// emptyDir is where the kubelet keeps a pod's emptyDir volume.
func (h *diskHarness) emptyDir(p *v1.Pod, name string) string {
	return filepath.Join(h.dirs.GetPodDir(p.UID), "volumes", "kubernetes.io~empty-dir", name)
}

// diskPods: a writer and an idle pod, both with an emptyDir "scratch";
// by the Summary API's volume figures (refreshed about once a minute)
// idle holds 500Mi and the writer 10Mi.
func diskPods() (writer, idle *v1.Pod, pods []*v1.Pod, st []statsapi.PodStats) {
	writer = pod("writer", withVolumes(emptyDirVol("scratch", "", "")))
	idle = pod("idle", withVolumes(emptyDirVol("scratch", "", "")))
	st = []statsapi.PodStats{
		fakePodStats(writer, fakePodUsage{rootfs: []int64{mi}, logs: []int64{mi}, volumes: map[string]int64{"scratch": 10 * mi}, ephem: -1}),
		fakePodStats(idle, fakePodUsage{rootfs: []int64{mi}, logs: []int64{mi}, volumes: map[string]int64{"scratch": 500 * mi}, ephem: -1}),
	}
	return writer, idle, []*v1.Pod{idle, writer}, st
}

// lowDisk is a Summary API whose nodefs shows what statfs shows (the
// kubelet reads it live) with the pods' stale volume figures.
func lowDisk(at time.Time, avail int64, st ...statsapi.PodStats) *statsapi.Summary {
	n := fakeHealthyNode()
	n.nodeFsAvail, n.imgFsAvail, n.ctrFsAvail = avail, avail, avail
	return n.summary(at, st...)
}

func TestDiskFastPassDecidesOnFreshFigures(t *testing.T) {
	writer, idle, pods, st := diskPods()
	h := newDiskHarness(t, pods, st)
	ctx := context.Background()

	if h.m.diskCrossed(ctx) {
		t.Fatal("diskCrossed before any monitoring pass (no layout yet)")
	}
	if ev := h.sync(); ev != nil {
		t.Fatalf("monitoring pass without pressure evicted %v", podNames(ev))
	}
	if h.m.diskCrossed(ctx) {
		t.Fatal("diskCrossed with 80Gi available")
	}
	if got := h.m.diskFastPass(ctx, h.activePods); got != nil || h.fs.walks != 0 {
		t.Fatalf("a disk fast pass without a crossing evicted %v after %d walks, want nothing and no walk", podNames(got), h.fs.walks)
	}

	// The writer fills its emptyDir with 3Gi: 600Mi left by statfs.
	h.clock.Step(3 * time.Second)
	h.fs.set(h.dirs.root, fsFigures{capacity: 100 * gi, available: 600 * mi, inodes: 1000000, inodesFree: 899000})
	h.fs.setTree(h.emptyDir(writer, "scratch"), diskUsage{bytes: 3 * gi, inodes: 2})
	h.fs.setTree(h.emptyDir(idle, "scratch"), diskUsage{bytes: 500 * mi, inodes: 100})
	if !h.m.diskCrossed(ctx) {
		t.Fatal("diskCrossed = false with 600Mi available by statfs")
	}
	// Node-level reclaim frees nothing; statfs after it shows as little
	// (the Summary API, not read, still shows 80Gi).
	before := mgrEvictionCount(t, string(evictionapi.SignalNodeFsAvailable))
	evicted := h.m.diskFastPass(ctx, h.activePods)
	if got := podNames(evicted); !reflect.DeepEqual(got, []string{"writer"}) {
		t.Fatalf("disk fast pass evicted %v, want [writer] (the largest by fresh figures; by the Summary API's it is idle)", got)
	}
	if got := h.log.get(); !reflect.DeepEqual(got, []string{"containers", "images"}) {
		t.Errorf("node-level reclaim %v, want containers then images first, as a monitoring pass", got)
	}
	k := h.killer.get()[0]
	if !PodIsEvicted(k.status) || *k.grace != 1 {
		t.Errorf("kill status %+v grace %d, want Evicted, grace 1", k.status, *k.grace)
	}
	if !strings.Contains(k.status.Message, "ephemeral-storage") {
		t.Errorf("message %q, want the starved resource", k.status.Message)
	}
	if d := mgrEvictionCount(t, string(evictionapi.SignalNodeFsAvailable)) - before; d != 1 {
		t.Errorf("kubelet_evictions delta %v, want 1", d)
	}
	if !h.m.IsUnderDiskPressure() {
		t.Error("DiskPressure not reported after the disk fast pass")
	}

	// While the writer terminates its volume is still there: no second
	// victim, from either path.
	h.clock.Step(time.Second)
	if got := h.m.diskFastPass(ctx, h.activePods); got != nil {
		t.Errorf("second disk fast pass while the writer terminates evicted %v", podNames(got))
	}
	h.summary.set(lowDisk(h.clock.Now(), 600*mi, st...))
	if ev := h.sync(); ev != nil {
		t.Errorf("monitoring pass while the writer terminates evicted %v", podNames(ev))
	}

	// Once it is cleaned up, stats from before the fast pass's figures
	// must not evict idle either.
	h.cleanedUp(writer)
	h.pods = []*v1.Pod{idle}
	h.clock.Step(time.Second)
	h.summary.set(lowDisk(mgrEpoch.Add(2*time.Second), 600*mi, st[1]))
	if ev := h.sync(); ev != nil {
		t.Errorf("monitoring pass on stats older than the disk fast pass evicted %v", podNames(ev))
	}
	if n := len(h.killer.get()); n != 1 {
		t.Errorf("%d kills in all, want 1", n)
	}
}

// After node-level reclaim a disk fast pass reads the filesystems with
// statfs again, where its figures came from: what reclaim freed counts at
// once whatever the Summary API says. Where statfs cannot read the
// filesystem then, the Summary API decides.
func TestDiskFastPassJudgesReclaimByStatfs(t *testing.T) {
	for _, tc := range []struct {
		name string
		// reclaim is what container GC does to the node's filesystem.
		reclaim func(h *diskHarness)
		want    []string
	}{
		{"reclaim frees enough by statfs, Summary API still low", func(h *diskHarness) {
			h.fs.set(h.dirs.root, fsFigures{capacity: 100 * gi, available: 2 * gi, inodes: 1000000, inodesFree: 899000})
		}, nil},
		{"reclaim frees too little by statfs", func(h *diskHarness) {
			h.fs.set(h.dirs.root, fsFigures{capacity: 100 * gi, available: 700 * mi, inodes: 1000000, inodesFree: 899000})
		}, []string{"writer"}},
		{"statfs fails after reclaim: the Summary API's figures, relieved", func(h *diskHarness) {
			h.fs.mu.Lock()
			defer h.fs.mu.Unlock()
			delete(h.fs.fs, h.dirs.root)
			h.summary.set(lowDisk(h.clock.Now(), 2*gi))
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			writer, idle, pods, st := diskPods()
			h := newDiskHarness(t, pods, st)
			ctx := context.Background()
			h.sync()
			h.clock.Step(3 * time.Second)
			h.fs.set(h.dirs.root, fsFigures{capacity: 100 * gi, available: 600 * mi, inodes: 1000000, inodesFree: 899000})
			h.fs.setTree(h.emptyDir(writer, "scratch"), diskUsage{bytes: 3 * gi, inodes: 2})
			h.fs.setTree(h.emptyDir(idle, "scratch"), diskUsage{bytes: 500 * mi, inodes: 100})
			h.summary.set(lowDisk(h.clock.Now(), 600*mi, st...))
			h.contGC.effect = func() { tc.reclaim(h) }
			if got := podNames(h.m.diskFastPass(ctx, h.activePods)); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("disk fast pass evicted %v, want %v", got, tc.want)
			}
			if got := h.log.get(); !reflect.DeepEqual(got, []string{"containers", "images"}) {
				t.Errorf("node-level reclaim %v, want containers then images", got)
			}
		})
	}
}

// Without the gate, the same figures make upstream's pass take idle: what
// the disk fast path changes (the control of the test above).
func TestDiskMonitoringPassRanksOnStaleVolumes(t *testing.T) {
	_, _, pods, st := diskPods()
	h := mgrNewHarness(t, Config{PressureTransitionPeriod: 5 * time.Minute, Thresholds: mgrDiskConfig().Thresholds[:1]}, false, lowDisk(mgrEpoch, 600*mi, st...))
	h.pods = pods
	if got := podNames(h.sync()); !reflect.DeepEqual(got, []string{"idle"}) {
		t.Errorf("monitoring pass evicted %v, want [idle] by the Summary API's volume figures", got)
	}
}

func TestDiskFastPassWithDedicatedImageFs(t *testing.T) {
	_, _, pods, st := diskPods()
	h := newDiskHarness(t, pods, st)
	h.m.config.Thresholds = []evictionapi.Threshold{hard(evictionapi.SignalImageFsAvailable, "1Gi")}
	h.m.state = newDecisionState(1)
	h.disk.imageFs = true
	images := filepath.Join(h.dirs.root, "images")
	h.fs.set(images, fsFigures{capacity: 10 * gi, available: 5 * gi, inodes: 1000, inodesFree: 900})
	ctx := context.Background()
	h.sync()
	if h.m.diskCrossed(ctx) {
		t.Fatal("diskCrossed with 5Gi available on the image filesystem")
	}
	// nodefs full does not cross an imagefs threshold; the image
	// filesystem does.
	h.fs.set(h.dirs.root, fsFigures{capacity: 100 * gi, available: 0, inodes: 1000000, inodesFree: 0})
	if h.m.diskCrossed(ctx) {
		t.Fatal("diskCrossed by nodefs figures for an imagefs threshold")
	}
	h.fs.set(images, fsFigures{capacity: 10 * gi, available: 100 * mi, inodes: 1000, inodesFree: 900})
	if !h.m.diskCrossed(ctx) {
		t.Fatal("diskCrossed = false with 100Mi left on the image filesystem")
	}
	h.clock.Step(time.Second)
	h.summary.set(lowDisk(h.clock.Now(), 100*mi, st...))
	if got := podNames(h.m.diskFastPass(ctx, h.activePods)); len(got) != 1 {
		t.Errorf("disk fast pass on the image filesystem evicted %v, want one pod", got)
	}
}

func TestDiskFastPathWatcherEvicts(t *testing.T) {
	writer, idle, pods, st := diskPods()
	h := newDiskHarness(t, pods, st)
	h.sync()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { defer close(done); h.m.watchDisk(ctx, h.activePods) }()

	h.fs.setTree(h.emptyDir(writer, "scratch"), diskUsage{bytes: 3 * gi, inodes: 2})
	h.fs.setTree(h.emptyDir(idle, "scratch"), diskUsage{bytes: 500 * mi, inodes: 100})
	h.summary.set(lowDisk(mgrEpoch, 600*mi, st...))
	h.fs.set(h.dirs.root, fsFigures{capacity: 100 * gi, available: 600 * mi, inodes: 1000000, inodesFree: 899000})
	stepUntilKilled(t, h.mgrHarness, diskFastPathInterval)
	if got := h.killedNames(); !reflect.DeepEqual(got, []string{"writer"}) {
		t.Errorf("watcher evicted %v, want [writer]", got)
	}
	cancel()
	<-done
}

func TestStartDiskFastPath(t *testing.T) {
	_, _, pods, st := diskPods()
	for _, tc := range []struct {
		name       string
		thresholds []evictionapi.Threshold
		noDirs     bool
		unreadable bool
		want       bool
	}{
		{name: "hard nodefs threshold", thresholds: []evictionapi.Threshold{hard(sigNodeFs, "1Gi")}, want: true},
		{name: "hard inodes threshold", thresholds: []evictionapi.Threshold{hard(sigNodeInodes, "100")}, want: true},
		{name: "soft disk threshold only", thresholds: []evictionapi.Threshold{soft(sigNodeFs, "1Gi", time.Minute)}},
		{name: "memory threshold only", thresholds: []evictionapi.Threshold{hard(sigMem, "1Gi")}},
		{name: "the kubelet gives no directories", thresholds: []evictionapi.Threshold{hard(sigNodeFs, "1Gi")}, noDirs: true},
		{name: "nodefs cannot be read", thresholds: []evictionapi.Threshold{hard(sigNodeFs, "1Gi")}, unreadable: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newDiskHarness(t, pods, st)
			h.m.fast.watching = [len(conditionOrder)]bool{}
			h.m.config.Thresholds = tc.thresholds
			var info DiskInfoProvider = h.dirs
			if tc.noDirs {
				info = h.disk
			}
			if tc.unreadable {
				h.dirs.root = "/nowhere"
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if got := h.m.startDiskFastPath(ctx, info, h.activePods, nil); got != tc.want {
				t.Errorf("started %v, want %v", got, tc.want)
			}
			if got := h.m.fastPathWatches(sigNodeFs); got != tc.want {
				t.Errorf("disk evictions tracked %v, want %v", got, tc.want)
			}
		})
	}
	t.Run("gate off", func(t *testing.T) {
		setGateDuringTest(t, evictionDiskFastPath, false)
		h := mgrNewHarness(t, mgrDiskConfig(), false, fakeHealthyNode().summary(mgrEpoch))
		if h.m.alpha[evictionDiskFastPath] {
			t.Error("the disk fast path is on with the gate off")
		}
	})
}

// measurePods walks each volume the ranking counts as local storage
// (not the memory-backed emptyDir, the secret, the hostPath or the
// downwardAPI volume) and each container's log directory.
func TestMeasurePodsWalks(t *testing.T) {
	p := pod("p", withContainers(v1.Container{Name: "app"}), withInitContainers(v1.Container{Name: "init"}),
		withVolumes(emptyDirVol("disk", "", ""), emptyDirVol("ram", "", v1.StorageMediumMemory), configMapVol("cfg"),
			secretVol("token"), hostPathVol("host"), gitRepoVol("repo")))
	p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: "info", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{}}})
	dirs := &fakeDirs{root: "/r"}
	var walked []string
	w := &diskWatch{dirs: dirs, usage: func(dir string) (diskUsage, error) {
		walked = append(walked, dir)
		if strings.HasSuffix(dir, "/repo") {
			return diskUsage{}, errors.New("unreadable")
		}
		return diskUsage{bytes: int64(len(dir)), inodes: 1}, nil
	}}
	got := w.measurePods(ktesting.NewLogger(t, ktesting.NewConfig()), []*v1.Pod{p})
	want := []string{
		"/r/pods/p-uid/volumes/kubernetes.io~empty-dir/disk",
		"/r/pods/p-uid/volumes/kubernetes.io~configmap/cfg",
		"/r/pods/p-uid/volumes/kubernetes.io~git-repo/repo",
		"/r/logs/ns_p_p-uid/init",
		"/r/logs/ns_p_p-uid/app",
	}
	if !reflect.DeepEqual(walked, want) {
		t.Errorf("walked\n  %v\nwant\n  %v", walked, want)
	}
	u := got[p.UID]
	if _, ok := u.volumes["repo"]; ok || len(u.volumes) != 2 || len(u.logs) != 2 {
		t.Errorf("measured volumes %v, logs %v; want disk and cfg (repo could not be read), and both containers' logs", u.volumes, u.logs)
	}
}

package eviction

// The builders every test of the package uses: quantities, pods, volumes,
// pod and node stats, thresholds and observations. Pods live in namespace
// "ns", get UID "<name>-uid" and one container "app" unless told
// otherwise; pod stats refer to the pod of the same name. The manager
// harness's whole-node stats model is in fakes_test.go.

import (
	"fmt"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
	kubelettypes "k8s.io/kubernetes/pkg/kubelet/types"
)

// t0 is the reference time of every test.
var t0 = time.Date(2026, time.March, 1, 12, 0, 0, 0, time.UTC)

// Binary units, untyped so they fit any integer type.
const (
	mi = 1 << 20
	gi = 1 << 30
)

// systemCritical is the lowest system-critical priority.
const systemCritical int32 = 2000000000

// ---- quantities -------------------------------------------------------------

func q(s string) resource.Quantity { return resource.MustParse(s) }

func qp(s string) *resource.Quantity { v := resource.MustParse(s); return &v }

// bytesOf returns the value of a quantity string as a *uint64.
func bytesOf(s string) *uint64 { x := q(s); v := uint64(x.Value()); return &v }

func u64p(v uint64) *uint64 { return &v }

func i64p(v int64) *int64 { return &v }

// rl builds a resource list from name/quantity pairs.
func rl(pairs ...string) v1.ResourceList {
	out := v1.ResourceList{}
	for i := 0; i+1 < len(pairs); i += 2 {
		out[v1.ResourceName(pairs[i])] = q(pairs[i+1])
	}
	return out
}

// ---- pods -------------------------------------------------------------------

type podOpt func(*v1.Pod)

func pod(name string, opts ...podOpt) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(name + "-uid")},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "app"}}},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func inNamespace(ns string) podOpt { return func(p *v1.Pod) { p.Namespace = ns } }

func withUID(uid string) podOpt { return func(p *v1.Pod) { p.UID = types.UID(uid) } }

func withPriority(prio int32) podOpt { return func(p *v1.Pod) { p.Spec.Priority = &prio } }

func withGrace(sec int64) podOpt {
	return func(p *v1.Pod) { p.Spec.TerminationGracePeriodSeconds = &sec }
}

// withRequest sets a request on the first container.
func withRequest(name v1.ResourceName, s string) podOpt {
	return func(p *v1.Pod) {
		c := &p.Spec.Containers[0]
		if c.Resources.Requests == nil {
			c.Resources.Requests = v1.ResourceList{}
		}
		c.Resources.Requests[name] = q(s)
	}
}

// withLimit sets a limit on the first container.
func withLimit(name v1.ResourceName, s string) podOpt {
	return func(p *v1.Pod) {
		c := &p.Spec.Containers[0]
		if c.Resources.Limits == nil {
			c.Resources.Limits = v1.ResourceList{}
		}
		c.Resources.Limits[name] = q(s)
	}
}

func withMemRequest(s string) podOpt { return withRequest(v1.ResourceMemory, s) }

func withStorageRequest(s string) podOpt { return withRequest(v1.ResourceEphemeralStorage, s) }

func withStorageLimit(s string) podOpt { return withLimit(v1.ResourceEphemeralStorage, s) }

// withContainers replaces the pod's containers.
func withContainers(cs ...v1.Container) podOpt {
	return func(p *v1.Pod) { p.Spec.Containers = cs }
}

func withInitContainers(cs ...v1.Container) podOpt {
	return func(p *v1.Pod) { p.Spec.InitContainers = cs }
}

func withVolumes(vs ...v1.Volume) podOpt {
	return func(p *v1.Pod) { p.Spec.Volumes = append(p.Spec.Volumes, vs...) }
}

// withTolerations adds tolerations to the pod's.
func withTolerations(ts ...v1.Toleration) podOpt {
	return func(p *v1.Pod) { p.Spec.Tolerations = append(p.Spec.Tolerations, ts...) }
}

// withPodRequests sets pod-level resource requests.
func withPodRequests(list v1.ResourceList) podOpt {
	return func(p *v1.Pod) { p.Spec.Resources = &v1.ResourceRequirements{Requests: list} }
}

func withAnnotation(key, value string) podOpt {
	return func(p *v1.Pod) {
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[key] = value
	}
}

// staticPod marks the pod as coming from a manifest file.
func staticPod() podOpt {
	return withAnnotation(kubelettypes.ConfigSourceAnnotationKey, kubelettypes.FileSource)
}

func withGeneration(g int64) podOpt { return func(p *v1.Pod) { p.Generation = g } }

// container builds a container with the given requests and limits.
func container(name string, requests, limits v1.ResourceList) v1.Container {
	return v1.Container{Name: name, Resources: v1.ResourceRequirements{Requests: requests, Limits: limits}}
}

// sidecar builds a restartable init container.
func sidecar(name string, requests, limits v1.ResourceList) v1.Container {
	c := container(name, requests, limits)
	always := v1.ContainerRestartPolicyAlways
	c.RestartPolicy = &always
	return c
}

// ---- volumes ----------------------------------------------------------------

func emptyDirVol(name, sizeLimit string, medium v1.StorageMedium) v1.Volume {
	ed := &v1.EmptyDirVolumeSource{Medium: medium}
	if sizeLimit != "" {
		ed.SizeLimit = qp(sizeLimit)
	}
	return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{EmptyDir: ed}}
}

func hostPathVol(name string) v1.Volume {
	return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/data"}}}
}

func configMapVol(name string) v1.Volume {
	return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{}}}
}

func secretVol(name string) v1.Volume {
	return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{}}}
}

func gitRepoVol(name string) v1.Volume {
	return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{GitRepo: &v1.GitRepoVolumeSource{}}}
}

// ---- pod stats --------------------------------------------------------------

type podStatsOpt func(*statsapi.PodStats)

func podStats(name string, opts ...podStatsOpt) statsapi.PodStats {
	s := statsapi.PodStats{PodRef: statsapi.PodReference{Name: name, Namespace: "ns", UID: name + "-uid"}}
	for _, o := range opts {
		o(&s)
	}
	return s
}

func statsUID(uid string) podStatsOpt { return func(s *statsapi.PodStats) { s.PodRef.UID = uid } }

// withWorkingSet sets the pod's memory working set.
func withWorkingSet(v string) podStatsOpt {
	return func(s *statsapi.PodStats) { s.Memory = &statsapi.MemoryStats{WorkingSetBytes: bytesOf(v)} }
}

func withProcesses(n uint64) podStatsOpt {
	return func(s *statsapi.PodStats) { s.ProcessStats = &statsapi.ProcessStats{ProcessCount: u64p(n)} }
}

// withEphemeralUsed sets the pod's total ephemeral storage use.
func withEphemeralUsed(v string) podStatsOpt {
	return func(s *statsapi.PodStats) { s.EphemeralStorage = &statsapi.FsStats{UsedBytes: bytesOf(v)} }
}

func withContainerStats(cs ...statsapi.ContainerStats) podStatsOpt {
	return func(s *statsapi.PodStats) { s.Containers = append(s.Containers, cs...) }
}

// withVolumeStats adds a volume's used bytes and inodes.
func withVolumeStats(name string, bytes, inodes uint64) podStatsOpt {
	return func(s *statsapi.PodStats) {
		s.VolumeStats = append(s.VolumeStats, statsapi.VolumeStats{
			Name:    name,
			FsStats: statsapi.FsStats{UsedBytes: u64p(bytes), InodesUsed: u64p(inodes)},
		})
	}
}

type containerStatsOpt func(*statsapi.ContainerStats)

func cStats(name string, opts ...containerStatsOpt) statsapi.ContainerStats {
	c := statsapi.ContainerStats{Name: name}
	for _, o := range opts {
		o(&c)
	}
	return c
}

func cWorkingSet(v string) containerStatsOpt {
	return func(c *statsapi.ContainerStats) { c.Memory = &statsapi.MemoryStats{WorkingSetBytes: bytesOf(v)} }
}

func cRootfs(bytes, inodes uint64) containerStatsOpt {
	return func(c *statsapi.ContainerStats) {
		c.Rootfs = &statsapi.FsStats{UsedBytes: u64p(bytes), InodesUsed: u64p(inodes)}
	}
}

func cLogs(bytes, inodes uint64) containerStatsOpt {
	return func(c *statsapi.ContainerStats) {
		c.Logs = &statsapi.FsStats{UsedBytes: u64p(bytes), InodesUsed: u64p(inodes)}
	}
}

//evictkit:begin ranking

// statsIndex indexes pod stats the way the core does.
func statsIndex(ps ...statsapi.PodStats) podStatsIndex {
	return indexPodStats(&statsapi.Summary{Pods: ps})
}

//evictkit:end ranking

// ---- node summary -----------------------------------------------------------

type summaryOpt func(*statsapi.Summary)

func summary(opts ...summaryOpt) *statsapi.Summary {
	s := &statsapi.Summary{}
	for _, o := range opts {
		o(s)
	}
	return s
}

func memUse(available, workingSet uint64, at time.Time) *statsapi.MemoryStats {
	return &statsapi.MemoryStats{Time: metav1.NewTime(at), AvailableBytes: u64p(available), WorkingSetBytes: u64p(workingSet)}
}

func fsStats(available, capacity, inodesFree, inodes uint64, at time.Time) *statsapi.FsStats {
	return &statsapi.FsStats{
		Time:           metav1.NewTime(at),
		AvailableBytes: u64p(available),
		CapacityBytes:  u64p(capacity),
		InodesFree:     u64p(inodesFree),
		Inodes:         u64p(inodes),
	}
}

func nodeMem(m *statsapi.MemoryStats) summaryOpt {
	return func(s *statsapi.Summary) { s.Node.Memory = m }
}

// allocMem adds the "pods" system container with memory stats m.
func allocMem(m *statsapi.MemoryStats) summaryOpt {
	return func(s *statsapi.Summary) {
		s.Node.SystemContainers = append(s.Node.SystemContainers, statsapi.ContainerStats{Name: statsapi.SystemContainerPods, Memory: m})
	}
}

func nodeFs(f *statsapi.FsStats) summaryOpt { return func(s *statsapi.Summary) { s.Node.Fs = f } }

func imageFs(f *statsapi.FsStats) summaryOpt {
	return func(s *statsapi.Summary) {
		if s.Node.Runtime == nil {
			s.Node.Runtime = &statsapi.RuntimeStats{}
		}
		s.Node.Runtime.ImageFs = f
	}
}

func containerFs(f *statsapi.FsStats) summaryOpt {
	return func(s *statsapi.Summary) {
		if s.Node.Runtime == nil {
			s.Node.Runtime = &statsapi.RuntimeStats{}
		}
		s.Node.Runtime.ContainerFs = f
	}
}

func pidStats(maxPID, running int64, at time.Time) summaryOpt {
	return func(s *statsapi.Summary) {
		s.Node.Rlimit = &statsapi.RlimitStats{Time: metav1.NewTime(at), MaxPID: i64p(maxPID), NumOfRunningProcesses: i64p(running)}
	}
}

// ---- thresholds and observations --------------------------------------------

// hard builds a hard threshold below a quantity.
func hard(signal evictionapi.Signal, value string) evictionapi.Threshold {
	return evictionapi.Threshold{Signal: signal, Operator: evictionapi.OpLessThan, Value: evictionapi.ThresholdValue{Quantity: qp(value)}}
}

// hardPct builds a hard threshold below a fraction of capacity.
func hardPct(signal evictionapi.Signal, fraction float32) evictionapi.Threshold {
	return evictionapi.Threshold{Signal: signal, Operator: evictionapi.OpLessThan, Value: evictionapi.ThresholdValue{Percentage: fraction}}
}

// soft builds a soft threshold below a quantity.
func soft(signal evictionapi.Signal, value string, grace time.Duration) evictionapi.Threshold {
	t := hard(signal, value)
	t.GracePeriod = grace
	return t
}

// minReclaim returns t with a quantity minimum reclaim.
func minReclaim(t evictionapi.Threshold, value string) evictionapi.Threshold {
	t.MinReclaim = &evictionapi.ThresholdValue{Quantity: qp(value)}
	return t
}

// ob is one observation for observations().
type ob struct {
	signal              evictionapi.Signal
	available, capacity int64
	at                  time.Time
}

func observations(obs ...ob) *observationSet {
	out := &observationSet{}
	for _, o := range obs {
		out.set(o.signal, observation{available: o.available, capacity: o.capacity, time: o.at})
	}
	return out
}

// describe renders a threshold compactly for comparisons.
func describe(t evictionapi.Threshold) string {
	return fmt.Sprintf("%s %s %s grace=%s reclaim=%s", t.Signal, t.Operator, describeValue(t.Value), t.GracePeriod, describeValuePtr(t.MinReclaim))
}

func describeValue(v evictionapi.ThresholdValue) string {
	if v.Quantity != nil {
		return v.Quantity.String()
	}
	return strconv.FormatFloat(float64(v.Percentage)*100, 'g', 6, 64) + "%"
}

func describeValuePtr(v *evictionapi.ThresholdValue) string {
	if v == nil {
		return "-"
	}
	return describeValue(*v)
}

func describeAll(ts []evictionapi.Threshold) []string {
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		out = append(out, describe(t))
	}
	return out
}

// namesOf lists pod names in order.
func namesOf(pods []*v1.Pod) []string {
	out := make([]string, 0, len(pods))
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

package parity

import (
	"fmt"
	"math/rand/v2"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/apis/scheduling"
	kubetypes "k8s.io/kubernetes/pkg/kubelet/types"
)

const (
	mi = int64(1) << 20
	gi = int64(1) << 30
)

// Generate builds the scenario of a seed. Sizes are drawn so that about
// half the passes put some signal past its threshold.
func Generate(seed uint64) *Scenario {
	g := &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	s := &Scenario{Seed: seed}
	s.Layout = Layout{DedicatedImageFs: g.chance(0.5)}
	s.Layout.SplitContainerFs = s.Layout.DedicatedImageFs && g.chance(0.4)
	s.LocalStorageIsolation = g.chance(0.5)
	s.PressureTransition = g.pick(0, 30*time.Second, 2*time.Minute, 5*time.Minute)
	s.MaxPodGracePeriod = int64(g.pickInt(0, 10, 30, 120))
	s.Node = g.node()
	s.Config = g.thresholds(s)
	if len(s.Config.Hard)+len(s.Config.Soft) == 0 {
		// Without thresholds and isolation, upstream's loop never asks
		// for pods or stats and spins: there would be no pass to drive.
		s.LocalStorageIsolation = true
	}
	n := 1 + g.r.IntN(9)
	for i := range n {
		s.Pods = append(s.Pods, g.pod(i))
	}
	for range 3 + g.r.IntN(6) {
		s.Passes = append(s.Passes, g.pass(s))
	}
	s.Probes = probes()
	return s
}

type gen struct{ r *rand.Rand }

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

func (g *gen) pick(ds ...time.Duration) time.Duration { return ds[g.r.IntN(len(ds))] }

func (g *gen) pickInt(vs ...int) int { return vs[g.r.IntN(len(vs))] }

// between draws uniformly from [lo, hi].
func (g *gen) between(lo, hi int64) int64 { return lo + g.r.Int64N(hi-lo+1) }

func (g *gen) node() Node {
	mem := g.between(2, 16) * gi
	return Node{
		Memory:      mem,
		Allocatable: mem - g.between(5, 25)*mem/100,
		NodeFs:      Fs{Bytes: g.between(20, 200) * gi, Inodes: g.between(1, 8) * 500_000},
		ImageFs:     Fs{Bytes: g.between(20, 200) * gi, Inodes: g.between(1, 8) * 500_000},
		MaxPID:      g.between(1, 8) * 4096,
		ImageGCFrees: FsUse{
			Bytes: g.between(0, 20) * gi, Inodes: g.between(0, 200_000),
		},
		ContainerGCFrees: FsUse{
			Bytes: g.between(0, 5) * gi, Inodes: g.between(0, 50_000),
		},
	}
}

// signalSpec is one configurable signal: how likely it is configured and
// how its values are drawn.
type signalSpec struct {
	name  string
	p     float64
	value func(g *gen, s *Scenario) string
}

func bytesOf(capacity func(s *Scenario) int64) func(g *gen, s *Scenario) string {
	return func(g *gen, s *Scenario) string {
		if g.chance(0.5) {
			return percent(g)
		}
		return fmt.Sprintf("%dMi", g.between(2, 20)*capacity(s)/100/mi)
	}
}

func countOf(capacity func(s *Scenario) int64) func(g *gen, s *Scenario) string {
	return func(g *gen, s *Scenario) string {
		if g.chance(0.5) {
			return percent(g)
		}
		return fmt.Sprint(g.between(2, 20) * capacity(s) / 100)
	}
}

func percent(g *gen) string {
	if g.chance(0.3) {
		return fmt.Sprintf("%d.%d%%", g.between(1, 19), g.between(1, 9))
	}
	return fmt.Sprintf("%d%%", g.between(1, 20))
}

var signalSpecs = []signalSpec{
	{"memory.available", 0.8, bytesOf(func(s *Scenario) int64 { return s.Node.Memory })},
	{"nodefs.available", 0.5, bytesOf(func(s *Scenario) int64 { return s.Node.NodeFs.Bytes })},
	{"nodefs.inodesFree", 0.3, countOf(func(s *Scenario) int64 { return s.Node.NodeFs.Inodes })},
	{"imagefs.available", 0.35, bytesOf(func(s *Scenario) int64 { return s.Node.ImageFs.Bytes })},
	{"imagefs.inodesFree", 0.2, countOf(func(s *Scenario) int64 { return s.Node.ImageFs.Inodes })},
	{"containerfs.available", 0.08, bytesOf(func(s *Scenario) int64 { return s.Node.ImageFs.Bytes })},
	{"containerfs.inodesFree", 0.05, countOf(func(s *Scenario) int64 { return s.Node.ImageFs.Inodes })},
	{"pid.available", 0.3, countOf(func(s *Scenario) int64 { return s.Node.MaxPID })},
}

func (g *gen) thresholds(s *Scenario) ThresholdConfig {
	c := ThresholdConfig{Hard: map[string]string{}, Soft: map[string]string{}, Grace: map[string]string{}, MinReclaim: map[string]string{}}
	if g.chance(0.3) {
		c.Allocatable = []string{"pods"}
	}
	for _, sig := range signalSpecs {
		if g.chance(sig.p) {
			c.Hard[sig.name] = sig.value(g, s)
		}
		if g.chance(sig.p / 2) {
			c.Soft[sig.name] = sig.value(g, s)
			if !g.chance(0.02) { // else: a soft threshold without its grace period
				c.Grace[sig.name] = g.pick(0, 20*time.Second, time.Minute, 3*time.Minute).String()
			}
		}
		if (c.Hard[sig.name] != "" || c.Soft[sig.name] != "") && g.chance(0.3) {
			c.MinReclaim[sig.name] = sig.value(g, s)
		}
	}
	// Bad input, rarely: the parsers must agree on what they reject.
	switch {
	case g.chance(0.005):
		c.Hard["memory.available"] = "NaN%"
	case g.chance(0.01):
		c.Hard[g.pickString("memory.available", "nodefs.available", "pid.available")] = g.pickString("-5%", "abc", "150%", "-1Mi", "0%")
	case g.chance(0.005):
		c.Hard["memory.pressure"] = "1%"
	case g.chance(0.005):
		c.Grace["memory.available"] = "soon"
		c.Soft["memory.available"] = "10%"
	}
	return c
}

func (g *gen) pickString(vs ...string) string { return vs[g.r.IntN(len(vs))] }

// pod draws a pod of some QoS class, priority and origin.
func (g *gen) pod(i int) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        fmt.Sprintf("pod-%d", i),
			Namespace:   g.pickString("default", "team-a", "team-b"),
			UID:         types.UID(fmt.Sprintf("uid-%02d-%d", g.r.IntN(100), i)),
			Generation:  g.between(1, 5),
			Annotations: map[string]string{},
		},
	}
	if g.chance(0.3) { // two pods may share a name in different namespaces
		p.Name = fmt.Sprintf("pod-%d", g.r.IntN(i+1))
	}
	switch {
	case g.chance(0.06):
		p.Annotations[kubetypes.ConfigSourceAnnotationKey] = kubetypes.FileSource
	case g.chance(0.06):
		p.Annotations[kubetypes.ConfigSourceAnnotationKey] = kubetypes.ApiserverSource
		p.Annotations[kubetypes.ConfigMirrorAnnotationKey] = "mirror"
	default:
		p.Annotations[kubetypes.ConfigSourceAnnotationKey] = kubetypes.ApiserverSource
	}
	if g.chance(0.7) {
		prio := int32(g.pickInt(0, 0, 100, 1000, -10, int(scheduling.SystemCriticalPriority), int(scheduling.SystemCriticalPriority)+1000))
		p.Spec.Priority = &prio
	}
	if g.chance(0.6) {
		grace := int64(g.pickInt(0, 5, 30, 600))
		p.Spec.TerminationGracePeriodSeconds = &grace
	}
	qos := g.r.IntN(3) // 0 best effort, 1 burstable, 2 guaranteed
	for c := range 1 + g.r.IntN(2) {
		p.Spec.Containers = append(p.Spec.Containers, g.container(fmt.Sprintf("c%d", c), qos))
	}
	if g.chance(0.15) {
		always := v1.ContainerRestartPolicyAlways
		side := g.container("sidecar", qos)
		side.RestartPolicy = &always
		p.Spec.InitContainers = append(p.Spec.InitContainers, side)
	}
	if qos == 1 && g.chance(0.2) {
		p.Spec.Resources = &v1.ResourceRequirements{
			Requests: v1.ResourceList{v1.ResourceMemory: *resource.NewQuantity(g.between(64, 1024)*mi, resource.BinarySI)},
		}
	}
	if g.chance(0.4) {
		v := v1.Volume{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}
		if g.chance(0.6) {
			v.EmptyDir.SizeLimit = resource.NewQuantity(g.between(16, 1024)*mi, resource.BinarySI)
		}
		p.Spec.Volumes = append(p.Spec.Volumes, v)
	}
	if g.chance(0.15) {
		v := v1.Volume{Name: "shm", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}}}
		if g.chance(0.5) {
			v.EmptyDir.SizeLimit = resource.NewQuantity(g.between(16, 256)*mi, resource.BinarySI)
		}
		p.Spec.Volumes = append(p.Spec.Volumes, v)
	}
	return p
}

func (g *gen) container(name string, qos int) v1.Container {
	c := v1.Container{Name: name}
	if qos == 0 {
		return c
	}
	mem := resource.NewQuantity(g.between(64, 2048)*mi, resource.BinarySI)
	cpu := resource.NewMilliQuantity(g.between(100, 2000), resource.DecimalSI)
	c.Resources.Requests = v1.ResourceList{v1.ResourceMemory: *mem, v1.ResourceCPU: *cpu}
	if qos == 2 {
		c.Resources.Limits = v1.ResourceList{v1.ResourceMemory: *mem, v1.ResourceCPU: *cpu}
	} else if g.chance(0.5) {
		c.Resources.Limits = v1.ResourceList{v1.ResourceMemory: *resource.NewQuantity(mem.Value()*2, resource.BinarySI)}
	}
	if g.chance(0.3) {
		eph := resource.NewQuantity(g.between(64, 4096)*mi, resource.BinarySI)
		c.Resources.Requests[v1.ResourceEphemeralStorage] = *eph
		if g.chance(0.7) {
			if c.Resources.Limits == nil {
				c.Resources.Limits = v1.ResourceList{}
			}
			c.Resources.Limits[v1.ResourceEphemeralStorage] = *eph
		}
	}
	return c
}

// pass draws one pass: per resource, how close the node runs to its
// capacity, and each pod's usage.
func (g *gen) pass(s *Scenario) Pass {
	p := Pass{
		Gap:              time.Duration(g.between(1, 90)) * time.Second,
		Pods:             map[int]PodUsage{},
		SummaryFails:     g.chance(0.04),
		StaleStats:       g.chance(0.06),
		ImageGCFails:     g.chance(0.1),
		ContainerGCFails: g.chance(0.1),
		KillFails:        g.chance(0.05),
	}
	if g.chance(0.2) {
		p.Gap = time.Duration(g.between(2, 6)) * time.Minute
	}
	var podMem, podRoot, podLogs, podVol, podProcs int64
	var podRootInodes, podLogInodes, podVolInodes int64
	for i, pod := range s.Pods {
		if g.chance(0.1) {
			continue // no stats for this pod this pass
		}
		u := PodUsage{Volumes: map[string]FsUse{}, Processes: g.between(1, 300)}
		for _, c := range append(sidecars(pod), pod.Spec.Containers...) {
			cu := ContainerUsage{
				Name:       c.Name,
				WorkingSet: g.between(8, 1536) * mi,
				Rootfs:     FsUse{Bytes: g.between(0, 3072) * mi, Inodes: g.between(0, 20_000)},
				Logs:       FsUse{Bytes: g.between(0, 512) * mi, Inodes: g.between(1, 50)},
			}
			u.Containers = append(u.Containers, cu)
			podMem += cu.WorkingSet
			podRoot, podRootInodes = podRoot+cu.Rootfs.Bytes, podRootInodes+cu.Rootfs.Inodes
			podLogs, podLogInodes = podLogs+cu.Logs.Bytes, podLogInodes+cu.Logs.Inodes
		}
		for _, v := range pod.Spec.Volumes {
			vu := FsUse{Bytes: g.between(0, 1536) * mi, Inodes: g.between(0, 10_000)}
			u.Volumes[v.Name] = vu
			if v.EmptyDir.Medium != v1.StorageMediumMemory {
				podVol, podVolInodes = podVol+vu.Bytes, podVolInodes+vu.Inodes
			}
		}
		podProcs += u.Processes
		p.Pods[i] = u
	}
	// System usage leaves the node's free share at a drawn fraction.
	free := func(capacity, pods int64) int64 {
		frac := g.r.Float64() * 0.25
		if g.chance(0.5) {
			frac = 0.25 + g.r.Float64()*0.65
		}
		return max(0, capacity-int64(frac*float64(capacity))-pods)
	}
	p.System.Memory = free(s.Node.Memory, podMem)
	nodeFsPods, nodeFsPodInodes := podLogs+podVol, podLogInodes+podVolInodes
	if !s.Layout.DedicatedImageFs || s.Layout.SplitContainerFs {
		nodeFsPods, nodeFsPodInodes = nodeFsPods+podRoot, nodeFsPodInodes+podRootInodes
	}
	p.System.NodeFs = FsUse{Bytes: free(s.Node.NodeFs.Bytes, nodeFsPods), Inodes: free(s.Node.NodeFs.Inodes, nodeFsPodInodes)}
	imageFsPods, imageFsPodInodes := int64(0), int64(0)
	if s.Layout.DedicatedImageFs && !s.Layout.SplitContainerFs {
		imageFsPods, imageFsPodInodes = podRoot, podRootInodes
	}
	p.System.ImageFs = FsUse{Bytes: free(s.Node.ImageFs.Bytes, imageFsPods), Inodes: free(s.Node.ImageFs.Inodes, imageFsPodInodes)}
	p.System.Processes = free(s.Node.MaxPID, podProcs)
	return p
}

// sidecars are the pod's restartable init containers.
func sidecars(p *v1.Pod) []v1.Container {
	var out []v1.Container
	for _, c := range p.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			out = append(out, c)
		}
	}
	return out
}

// probes are the pods offered for admission after each pass: one of each
// QoS class, a critical one, and best-effort pods tolerating the memory
// or the disk pressure taint.
func probes() []*v1.Pod {
	mem := resource.MustParse("128Mi")
	probe := func(name string, mutate func(*v1.Pod)) *v1.Pod {
		p := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "probe", UID: types.UID("probe-" + name),
				Annotations: map[string]string{kubetypes.ConfigSourceAnnotationKey: kubetypes.ApiserverSource}},
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c"}}},
		}
		if mutate != nil {
			mutate(p)
		}
		return p
	}
	toleration := func(key string) func(*v1.Pod) {
		return func(p *v1.Pod) {
			p.Spec.Tolerations = []v1.Toleration{{Key: key, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}}
		}
	}
	return []*v1.Pod{
		probe("best-effort", nil),
		probe("burstable", func(p *v1.Pod) {
			p.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceMemory: mem}
		}),
		probe("guaranteed", func(p *v1.Pod) {
			rl := v1.ResourceList{v1.ResourceMemory: mem, v1.ResourceCPU: resource.MustParse("100m")}
			p.Spec.Containers[0].Resources = v1.ResourceRequirements{Requests: rl, Limits: rl}
		}),
		probe("static", func(p *v1.Pod) { p.Annotations[kubetypes.ConfigSourceAnnotationKey] = kubetypes.FileSource }),
		probe("tolerates-memory-pressure", toleration(v1.TaintNodeMemoryPressure)),
		probe("tolerates-disk-pressure", toleration(v1.TaintNodeDiskPressure)),
	}
}

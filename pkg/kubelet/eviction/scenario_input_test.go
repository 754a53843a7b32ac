package eviction

// The input lines of a scenario, one node and its pods per command:
//
//	threshold memory.available<1Gi [grace=1m] [min-reclaim=500Mi|5%]
//	threshold memory.psi.full.avg10>20        (EvictionPSI: met above)
//	observe memory.available=512Mi/8Gi [age=10s|seen=1s|untimed]
//	observe memory.psi.full.avg10=35.5%       (EvictionPSI: a stall share)
//	         available/capacity, gathered age before the pass (default 0),
//	         at t0+seen, or with no time (always fresh)
//	pod NAME [ns=N] [uid=U] [priority=P] [grace=S] [static] [mirror]
//	         [request=memory:1Gi,...] [limit=...] [init-request=...] [pod-request=...]
//	         [containers=A,B] [sidecar=S] [init=I] [request.C=...] [limit.C=...]
//	         [overhead=ephemeral-storage:256Mi]
//	         [volume=NAME:emptydir|memory|hostpath|configmap|secret|gitrepo[:SIZELIMIT]]...
//	stats NAME [ns=N] [uid=U] [ws=3Gi] [procs=12] [eph=1Gi] [container=C]...
//	         [cws=CONTAINER:3Gi]... [rootfs=CONTAINER:BYTES/INODES]... [logs=...]...
//	         [volume=NAME:BYTES/INODES|none]...
//	layout single|dedicated|split|split-only
//	transition 5m          how long a condition outlives its signal (default 5m)
//	max-grace 30           the soft eviction grace cap in seconds (default 30)
//	local-storage          enforce emptyDir and ephemeral-storage limits
//	gate pod-level-resources|memory-backed-volumes|reclaim-sized|explain
//	conditions MemoryPressure,DiskPressure    the node's conditions (admit)
//
// A pod line may also say tolerate=KEY[:EFFECT] (KEY all tolerates every
// taint; memory-pressure, disk-pressure and pid-pressure are the node's
// pressure taints).
//
// Quantities are Kubernetes quantities; inode and process counts are plain
// numbers. A pod has stats only when a stats line names it.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// scenarioFeature is what an alpha feature adds to the input lines: its
// own forms of threshold line (read by readThreshold, written back by
// writeThreshold; ok false: not its form) and of observe figures
// (readFigures turns them into AVAILABLE/CAPACITY, leaving others as they
// are), and a gate line (gate NAME, which setGate turns on). The
// feature's own test file registers it (addScenarioFeature); every field
// is optional.
type scenarioFeature struct {
	readThreshold  func(arg string) (t evictionapi.Threshold, ok bool, err error)
	writeThreshold func(t evictionapi.Threshold) (s string, ok bool)
	readFigures    func(figures string) (string, error)
	gate           string
	setGate        func(s *scenario)
}

// scenarioFeatures are the registered features.
var scenarioFeatures []scenarioFeature

func addScenarioFeature(f scenarioFeature) bool {
	scenarioFeatures = append(scenarioFeatures, f)
	return true
}

// scenario is one command's parsed input.
type scenario struct {
	thresholds   []evictionapi.Threshold
	observed     []observedLine
	pods         []*v1.Pod
	now          time.Time
	transition   time.Duration
	maxGrace     int64
	localStorage bool
	// memoryBackedVolumes: the gate InPlacePodVerticalScalingMemoryBackedVolumes.
	memoryBackedVolumes bool
	conditions          []v1.NodeConditionType
	//evictkit:begin ranking
	stats  podStatsIndex
	layout fsLayout
	//evictkit:end ranking
	//evictkit:begin decision
	gates featureGates
	//evictkit:end decision
}

// observedLine is an observe line: its stats were gathered age before the
// pass, at t0+seen when seen is set, or carry no time when untimed.
type observedLine struct {
	signal              evictionapi.Signal
	available, capacity int64
	age                 time.Duration
	seen                *time.Duration
	untimed             bool
}

// at is when the line's stats were gathered, for a pass at now.
func (o observedLine) at(now time.Time) time.Time {
	switch {
	case o.untimed:
		return time.Time{}
	case o.seen != nil:
		return t0.Add(*o.seen)
	}
	return now.Add(-o.age)
}

func parseScenario(input string) (*scenario, error) {
	s := &scenario{now: t0, transition: 5 * time.Minute, maxGrace: 30}
	var podStatsList []statsapi.PodStats
	for n, line := range strings.Split(input, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		var err error
		switch kind, args := fields[0], fields[1:]; kind {
		case "threshold":
			err = s.addThreshold(args)
		case "observe":
			err = s.addObservation(args)
		case "pod":
			var p *v1.Pod
			if p, err = parsePod(args); err == nil {
				s.pods = append(s.pods, p)
			}
		case "stats":
			var ps statsapi.PodStats
			if ps, err = parsePodStats(args); err == nil {
				podStatsList = append(podStatsList, ps)
			}
		//evictkit:begin ranking
		case "layout":
			if len(args) != 1 {
				err = fmt.Errorf("want one layout")
			} else {
				s.layout, err = parseLayout(args[0])
			}
		//evictkit:end ranking
		case "transition":
			if len(args) != 1 {
				err = fmt.Errorf("want one duration")
			} else {
				s.transition, err = time.ParseDuration(args[0])
			}
		case "max-grace":
			if len(args) != 1 {
				err = fmt.Errorf("want one number of seconds")
			} else {
				s.maxGrace, err = strconv.ParseInt(args[0], 10, 64)
			}
		case "local-storage":
			s.localStorage = true
		case "gate":
			err = s.setGates(args)
		case "conditions":
			if len(args) != 1 {
				err = fmt.Errorf("want a comma-separated list of conditions")
				break
			}
			for _, c := range strings.Split(args[0], ",") {
				s.conditions = append(s.conditions, v1.NodeConditionType(c))
			}
		default:
			err = fmt.Errorf("unknown line kind %q", kind)
		}
		if err != nil {
			return nil, fmt.Errorf("line %d %q: %w", n+1, line, err)
		}
	}
	//evictkit:begin ranking
	s.stats = statsIndex(podStatsList...)
	//evictkit:end ranking
	return s, nil
}

// state is the state a pass of the scenario starts from: prev, or a first
// pass's when nil.
func (s *scenario) state(prev *decisionState) *decisionState {
	if prev == nil {
		fresh := newDecisionState(len(s.thresholds))
		prev = &fresh
	}
	return prev
}

// observations are the scenario's observe lines, as of its pass.
func (s *scenario) observations() *observationSet {
	obs := &observationSet{}
	for _, o := range s.observed {
		obs.set(o.signal, observation{available: o.available, capacity: o.capacity, time: o.at(s.now)})
	}
	return obs
}

//evictkit:begin decision

// decideInput is the core's input for the scenario, after the state prev
// (nil: the first pass).
func (s *scenario) decideInput(prev *decisionState) *decideInput {
	gates := s.gates
	gates.memoryBackedVolumes = s.memoryBackedVolumes
	return &decideInput{
		thresholds:               s.thresholds,
		prev:                     s.state(prev),
		obs:                      s.observations(),
		pods:                     s.pods,
		stats:                    s.stats,
		layout:                   s.layout,
		now:                      s.now,
		transition:               s.transition,
		maxPodGracePeriodSeconds: s.maxGrace,
		localStorageIsolation:    s.localStorage,
		gates:                    gates,
	}
}

//evictkit:end decision

func parseSignal(s string) evictionapi.Signal { return evictionapi.Signal(s) }

//evictkit:begin ranking

func parseLayout(s string) (fsLayout, error) {
	switch s {
	case "", "single":
		return singleFs, nil
	case "dedicated":
		return dedicatedFs, nil
	case "split":
		return splitFs, nil
	case "split-only":
		return splitOnlyFs, nil
	}
	return fsLayout{}, fmt.Errorf("unknown layout %q (want single, dedicated, split or split-only)", s)
}

//evictkit:end ranking

// parseScenarioValue reads a quantity or a percentage.
func parseScenarioValue(s string) (evictionapi.ThresholdValue, error) {
	if pct, ok := strings.CutSuffix(s, "%"); ok {
		f, err := strconv.ParseFloat(pct, 32)
		if err != nil {
			return evictionapi.ThresholdValue{}, fmt.Errorf("percentage %q: %w", s, err)
		}
		return evictionapi.ThresholdValue{Percentage: float32(f / 100)}, nil
	}
	v, err := resource.ParseQuantity(s)
	if err != nil {
		return evictionapi.ThresholdValue{}, fmt.Errorf("quantity %q: %w", s, err)
	}
	return evictionapi.ThresholdValue{Quantity: &v}, nil
}

func (s *scenario) addThreshold(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("want SIGNAL<VALUE")
	}
	for _, f := range scenarioFeatures {
		if f.readThreshold == nil {
			continue
		}
		if t, ok, err := f.readThreshold(args[0]); err != nil {
			return err
		} else if ok {
			return s.addThresholdWith(t, args[1:])
		}
	}
	signal, value, ok := strings.Cut(args[0], "<")
	t := evictionapi.Threshold{Signal: parseSignal(signal)}
	switch {
	case ok:
		v, err := parseScenarioValue(value)
		if err != nil {
			return err
		}
		t.Operator, t.Value = evictionapi.OpLessThan, v
	case strings.ContainsAny(args[0], "<>="):
		return fmt.Errorf("%q: want SIGNAL<VALUE (or a bare SIGNAL: no operator)", args[0])
	}
	return s.addThresholdWith(t, args[1:])
}

// addThresholdWith adds t with a threshold line's options.
func (s *scenario) addThresholdWith(t evictionapi.Threshold, options []string) error {
	err := eachOption(options, func(key, val string) error {
		switch key {
		case "grace":
			d, err := time.ParseDuration(val)
			t.GracePeriod = d
			return err
		case "min-reclaim":
			mr, err := parseScenarioValue(val)
			t.MinReclaim = &mr
			return err
		}
		return errUnknownOption
	})
	s.thresholds = append(s.thresholds, t)
	return err
}

func (s *scenario) addObservation(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("want SIGNAL=AVAILABLE/CAPACITY")
	}
	signal, figures, ok := strings.Cut(args[0], "=")
	if !ok {
		return fmt.Errorf("%q: want SIGNAL=AVAILABLE/CAPACITY", args[0])
	}
	for _, f := range scenarioFeatures {
		if f.readFigures == nil {
			continue
		}
		var err error
		if figures, err = f.readFigures(figures); err != nil {
			return err
		}
	}
	avail, capa, ok := strings.Cut(figures, "/")
	if !ok {
		return fmt.Errorf("%q: want AVAILABLE/CAPACITY", figures)
	}
	// Available may be below zero: memory.available is capacity minus the
	// working set, which can exceed it.
	q, err := resource.ParseQuantity(avail)
	if err != nil {
		return fmt.Errorf("%q: %w", avail, err)
	}
	available, exact := q.AsInt64()
	if !exact {
		return fmt.Errorf("%q: want a whole number", avail)
	}
	c, err := parseBytes(capa)
	if err != nil {
		return err
	}
	capacity := int64(c)
	o := observedLine{signal: parseSignal(signal), available: available, capacity: capacity}
	err = eachOption(args[1:], func(key, val string) error {
		switch key {
		case "age":
			d, err := time.ParseDuration(val)
			o.age = d
			return err
		case "seen":
			d, err := time.ParseDuration(val)
			o.seen = &d
			return err
		case "untimed":
			o.untimed = true
			return nil
		}
		return errUnknownOption
	})
	s.observed = append(s.observed, o)
	return err
}

func (s *scenario) setGates(args []string) error {
	for _, g := range args {
		switch g {
		case "memory-backed-volumes":
			s.memoryBackedVolumes = true
		//evictkit:begin decision
		case "pod-level-resources":
			s.gates.podLevelResources = true
		//evictkit:end decision
		default:
			i := slices.IndexFunc(scenarioFeatures, func(f scenarioFeature) bool { return f.gate == g })
			if i < 0 {
				return fmt.Errorf("unknown gate %q", g)
			}
			scenarioFeatures[i].setGate(s)
		}
	}
	return nil
}

// parsePod reads a pod line's name and options into a pod built as every
// test of the package builds one (builders_test.go).
func parsePod(args []string) (*v1.Pod, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("want a pod name")
	}
	var opts []podOpt
	// missing records a container that request.NAME or limit.NAME did not
	// find when the pod was built.
	var missing []string
	err := eachOption(args[1:], func(key, val string) error {
		if kind, name, ok := strings.Cut(key, "."); ok && (kind == "request" || kind == "limit") {
			list, err := parseResourceList(val)
			if err != nil {
				return err
			}
			opts = append(opts, func(p *v1.Pod) {
				c := podContainer(p, name)
				if c == nil {
					missing = append(missing, name)
					return
				}
				target := &c.Resources.Requests
				if kind == "limit" {
					target = &c.Resources.Limits
				}
				if *target == nil {
					*target = v1.ResourceList{}
				}
				for n, v := range list {
					(*target)[n] = v
				}
			})
			return nil
		}
		switch key {
		case "containers":
			var cs []v1.Container
			for _, n := range strings.Split(val, ",") {
				cs = append(cs, v1.Container{Name: n})
			}
			opts = append(opts, withContainers(cs...))
		case "sidecar", "init":
			c := container(val, nil, nil)
			if key == "sidecar" {
				c = sidecar(val, nil, nil)
			}
			opts = append(opts, func(p *v1.Pod) { p.Spec.InitContainers = append(p.Spec.InitContainers, c) })
		case "overhead":
			list, err := parseResourceList(val)
			opts = append(opts, func(p *v1.Pod) { p.Spec.Overhead = list })
			return err
		case "ns":
			opts = append(opts, inNamespace(val))
		case "uid":
			opts = append(opts, withUID(val))
		case "priority":
			p, err := strconv.ParseInt(val, 10, 32)
			opts = append(opts, withPriority(int32(p)))
			return err
		case "grace":
			g, err := strconv.ParseInt(val, 10, 64)
			opts = append(opts, withGrace(g))
			return err
		case "static":
			opts = append(opts, staticPod())
		case "mirror":
			opts = append(opts, withAnnotation(v1.MirrorPodAnnotationKey, "mirror"))
		case "request", "limit", "init-request", "pod-request":
			list, err := parseResourceList(val)
			if err != nil {
				return err
			}
			opts = append(opts, resourcesOpt(key, list))
		case "volume":
			vol, err := parseVolume(val)
			opts = append(opts, withVolumes(vol))
			return err
		case "tolerate":
			tol, err := parseToleration(val)
			opts = append(opts, withTolerations(tol))
			return err
		default:
			return errUnknownOption
		}
		return nil
	})
	p := pod(args[0], opts...)
	if err == nil && len(missing) > 0 {
		err = fmt.Errorf("no container named %s", strings.Join(missing, ", "))
	}
	return p, err
}

// podContainer is the pod's container or init container named name.
func podContainer(p *v1.Pod, name string) *v1.Container {
	for _, list := range [][]v1.Container{p.Spec.Containers, p.Spec.InitContainers} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

// resourcesOpt applies a resource list where key says.
func resourcesOpt(key string, list v1.ResourceList) podOpt {
	switch key {
	case "init-request":
		return withInitContainers(container("setup", list, nil))
	case "pod-request":
		return withPodRequests(list)
	}
	return func(p *v1.Pod) {
		r := &p.Spec.Containers[0].Resources
		target := &r.Requests
		if key == "limit" {
			target = &r.Limits
		}
		if *target == nil {
			*target = v1.ResourceList{}
		}
		for name, v := range list {
			(*target)[name] = v
		}
	}
}

// parseResourceList reads memory:1Gi,ephemeral-storage:2Gi.
func parseResourceList(s string) (v1.ResourceList, error) {
	out := v1.ResourceList{}
	for _, item := range strings.Split(s, ",") {
		name, value, ok := strings.Cut(item, ":")
		if !ok {
			return nil, fmt.Errorf("%q: want NAME:QUANTITY", item)
		}
		v, err := resource.ParseQuantity(value)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", item, err)
		}
		out[v1.ResourceName(name)] = v
	}
	return out, nil
}

// parseToleration reads KEY[:EFFECT], KEY all tolerating every taint.
func parseToleration(s string) (v1.Toleration, error) {
	key, effect, _ := strings.Cut(s, ":")
	if key == "all" {
		if effect != "" {
			return v1.Toleration{}, fmt.Errorf("tolerate=%s: all takes no effect", s)
		}
		return v1.Toleration{Operator: v1.TolerationOpExists}, nil
	}
	taints := map[string]string{
		"memory-pressure": v1.TaintNodeMemoryPressure,
		"disk-pressure":   v1.TaintNodeDiskPressure,
		"pid-pressure":    v1.TaintNodePIDPressure,
	}
	taint, ok := taints[key]
	if !ok {
		return v1.Toleration{}, fmt.Errorf("tolerate=%s: unknown taint %q", s, key)
	}
	switch e := v1.TaintEffect(effect); e {
	case "", v1.TaintEffectNoSchedule, v1.TaintEffectPreferNoSchedule, v1.TaintEffectNoExecute:
		return v1.Toleration{Key: taint, Operator: v1.TolerationOpExists, Effect: e}, nil
	}
	return v1.Toleration{}, fmt.Errorf("tolerate=%s: unknown effect %q", s, effect)
}

// parseVolume reads NAME:KIND[:SIZELIMIT].
func parseVolume(s string) (v1.Volume, error) {
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return v1.Volume{}, fmt.Errorf("volume %q: want NAME:KIND[:SIZELIMIT]", s)
	}
	name, kind, limit := parts[0], parts[1], ""
	if len(parts) == 3 {
		limit = parts[2]
	}
	if limit != "" && kind != "emptydir" && kind != "memory" {
		return v1.Volume{}, fmt.Errorf("volume %q: only emptydir and memory volumes have a size limit", s)
	}
	switch kind {
	case "emptydir":
		return emptyDirVol(name, limit, v1.StorageMediumDefault), nil
	case "memory":
		return emptyDirVol(name, limit, v1.StorageMediumMemory), nil
	case "hostpath":
		return hostPathVol(name), nil
	case "configmap":
		return configMapVol(name), nil
	case "secret":
		return secretVol(name), nil
	case "gitrepo":
		return gitRepoVol(name), nil
	}
	return v1.Volume{}, fmt.Errorf("volume %q: unknown kind %q", s, kind)
}

// parsePodStats reads a stats line into the Summary API's pod stats.
func parsePodStats(args []string) (statsapi.PodStats, error) {
	if len(args) == 0 {
		return statsapi.PodStats{}, fmt.Errorf("want a pod name")
	}
	s := podStats(args[0])
	uidSet := false
	containerNamed := func(name string) *statsapi.ContainerStats {
		for i := range s.Containers {
			if s.Containers[i].Name == name {
				return &s.Containers[i]
			}
		}
		s.Containers = append(s.Containers, statsapi.ContainerStats{Name: name})
		return &s.Containers[len(s.Containers)-1]
	}
	err := eachOption(args[1:], func(key, val string) error {
		switch key {
		case "ns":
			s.PodRef.Namespace = val
		case "uid":
			s.PodRef.UID, uidSet = val, true
		case "ws":
			b, err := parseBytes(val)
			s.Memory = &statsapi.MemoryStats{WorkingSetBytes: u64p(b)}
			return err
		case "procs":
			n, err := strconv.ParseUint(val, 10, 64)
			s.ProcessStats = &statsapi.ProcessStats{ProcessCount: u64p(n)}
			return err
		case "eph":
			b, err := parseBytes(val)
			s.EphemeralStorage = &statsapi.FsStats{UsedBytes: u64p(b)}
			return err
		case "cws":
			name, q, ok := strings.Cut(val, ":")
			if !ok {
				return fmt.Errorf("cws=%s: want CONTAINER:QUANTITY", val)
			}
			b, err := parseBytes(q)
			containerNamed(name).Memory = &statsapi.MemoryStats{WorkingSetBytes: u64p(b)}
			return err
		case "container":
			containerNamed(val)
		case "rootfs", "logs", "volume":
			name, pair, ok := strings.Cut(val, ":")
			if !ok {
				return fmt.Errorf("%s=%s: want NAME:BYTES/INODES", key, val)
			}
			if key == "volume" && pair == "none" {
				s.VolumeStats = append(s.VolumeStats, statsapi.VolumeStats{Name: name})
				return nil
			}
			b, inodes, err := parsePair(pair)
			if err != nil {
				return err
			}
			fs := statsapi.FsStats{UsedBytes: u64p(uint64(b)), InodesUsed: u64p(uint64(inodes))}
			switch key {
			case "rootfs":
				containerNamed(name).Rootfs = &fs
			case "logs":
				containerNamed(name).Logs = &fs
			default:
				s.VolumeStats = append(s.VolumeStats, statsapi.VolumeStats{Name: name, FsStats: fs})
			}
		default:
			return errUnknownOption
		}
		return nil
	})
	if !uidSet {
		s.PodRef.UID = args[0] + "-uid"
	}
	return s, err
}

// parseBytes reads a non-negative quantity as a whole number of bytes.
func parseBytes(s string) (uint64, error) {
	v, err := resource.ParseQuantity(s)
	if err != nil {
		return 0, fmt.Errorf("%q: %w", s, err)
	}
	n, ok := v.AsInt64()
	if !ok || n < 0 {
		return 0, fmt.Errorf("%q: want a whole, non-negative number of bytes", s)
	}
	return uint64(n), nil
}

// parsePair reads A/B, two quantities.
func parsePair(s string) (int64, int64, error) {
	a, b, ok := strings.Cut(s, "/")
	if !ok {
		return 0, 0, fmt.Errorf("%q: want A/B", s)
	}
	x, err := parseBytes(a)
	if err != nil {
		return 0, 0, err
	}
	y, err := parseBytes(b)
	return int64(x), int64(y), err
}

var errUnknownOption = fmt.Errorf("unknown option")

// eachOption calls fn with each KEY=VALUE (or bare KEY) of args.
func eachOption(args []string, fn func(key, val string) error) error {
	for _, a := range args {
		key, val, _ := strings.Cut(a, "=")
		if err := fn(key, val); err != nil {
			return fmt.Errorf("%s: %w", a, err)
		}
	}
	return nil
}

func TestScenarioInputErrors(t *testing.T) {
	for _, tc := range []struct{ input, want string }{
		{"pod a prio=5", `line 1 "pod a prio=5": prio=5: unknown option`},
		{"threshold memory.available=1Gi", `want SIGNAL<VALUE`},
		{"observe memory.available=1/2 when=1s", `when=1s: unknown option`},
		{"\nobserve memory.available=1Gi", `line 2 "observe memory.available=1Gi": "1Gi": want AVAILABLE/CAPACITY`},
		{"stats a ws=-1", `want a whole, non-negative number of bytes`},
		{"pod a volume=v:hostpath:1Gi", `only emptydir and memory volumes have a size limit`},
		{"pod a limit.side=memory:1Gi", `no container named side`},
		//evictkit:begin ranking
		{"layout zfs", `unknown layout "zfs"`},
		//evictkit:end ranking
		{"nodes 3", `unknown line kind "nodes"`},
	} {
		_, err := parseScenario(tc.input)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one containing %q", tc.input, err, tc.want)
		}
	}
}

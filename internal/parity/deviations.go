package parity

import (
	"maps"
	"slices"
	"strings"

	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// deviation is one deliberate difference from upstream, with a rule that
// recognises a scenario where it shows.
type deviation struct {
	name string
	// effect says what differs, and why evictkit differs.
	effect string
	// applies may re-run scenarios to confirm the deviation is the only
	// difference.
	applies func(s *Scenario, ours, up *Trace, re rerunner) bool
}

// rerunner re-runs a changed scenario on the manager under test.
type rerunner interface {
	// matches reports whether upstream can come out as it does on s.
	matches(s *Scenario) bool
	// trace is its trace of s.
	trace(s *Scenario) *Trace
}

// deviations is every deliberate difference. A difference that none of
// them recognises is unexplained.
var deviations = []deviation{
	{
		name: "nan-percentage",
		effect: `A threshold of "NaN%" is rejected by evictkit's parser. Upstream accepts it; a NaN ` +
			`percentage is never met (every comparison with NaN is false), so upstream silently ` +
			`runs without that threshold.`,
		applies: func(s *Scenario, ours, up *Trace, _ rerunner) bool {
			return ours.ParseErr != nil && up.ParseErr == nil && configHas(s, "NaN%")
		},
	},
	{
		name: "parse-error-text",
		effect: `Both parsers reject the configuration, with different texts: evictkit's error names ` +
			`the setting, the signal and the value.`,
		applies: func(s *Scenario, ours, up *Trace, _ rerunner) bool {
			return ours.ParseErr != nil && up.ParseErr != nil && ours.Parse != up.Parse
		},
	},
	{
		name: "containerfs-thresholds-first-pass",
		effect: `Configured containerfs.* thresholds are replaced by ones derived from nodefs/imagefs ` +
			`(both packages log that they are ignored). Upstream's first pass still evaluates the ` +
			`configured ones, because it reads the threshold list before it rewrites it; a threshold ` +
			`met then is remembered as met, so DiskPressure, its node-level reclaim and evictions ` +
			`for it go on for as long as it stays met (to its minimum reclaim), and a soft one starts ` +
			`its grace period. evictkit ignores them from the first pass on.`,
		applies: func(s *Scenario, ours, up *Trace, re rerunner) bool {
			if len(s.Passes) == 0 || s.Passes[0].SummaryFails || !containerFsMetAtFirstPass(s, up) {
				return false
			}
			// Confirm it is the only difference: evictkit runs as if they
			// were not configured, and without them upstream comes out as
			// evictkit does.
			t := withoutContainerFs(s)
			if len(t.Config.Hard)+len(t.Config.Soft) == 0 && !t.LocalStorageIsolation {
				// Without them upstream has nothing to do and runs no
				// pass at all: evictkit must have done nothing either.
				return inert(ours)
			}
			return slices.Equal(re.trace(t).Lines()[1:], ours.Lines()[1:]) && re.matches(t)
		},
	},
	{
		name: "nil-used-bytes",
		effect: `Pod stats with a nil UsedBytes, InodesUsed or WorkingSetBytes: upstream dereferences ` +
			`them and panics in the monitoring goroutine; evictkit counts the pod as using nothing of ` +
			`that resource. Never generated here: a panic in upstream's goroutine would end the ` +
			`whole run. The package's unit tests cover evictkit's side.`,
		applies: func(*Scenario, *Trace, *Trace, rerunner) bool { return false },
	},
	{
		name: "serialized-passes",
		effect: `Upstream lets a memcg notification's pass run concurrently with the monitoring ` +
			`loop's; evictkit's passes never overlap. Not exercised here: no notifiers are armed ` +
			`(KernelMemcgNotification is false) and the harness runs one pass at a time.`,
		applies: func(*Scenario, *Trace, *Trace, rerunner) bool { return false },
	},
}

// explain names the deviation that explains why ours and up differ on s,
// or returns "".
func explain(s *Scenario, ours, up *Trace, re rerunner) string {
	for _, d := range deviations {
		if d.applies(s, ours, up, re) {
			return d.name
		}
	}
	return ""
}

// inert reports whether t's manager did nothing a kubelet would see: no
// kill, event or GC, no condition, every probe pod admitted.
func inert(t *Trace) bool {
	for _, p := range t.Passes {
		if len(p.Kills)+len(p.Events)+len(p.GC) > 0 || p.Pressure != "pressure memory=false disk=false pid=false" {
			return false
		}
		for _, a := range p.Admit {
			if !strings.HasSuffix(a, ": true") {
				return false
			}
		}
	}
	return t.Stuck == ""
}

// withoutContainerFs is s without its configured containerfs.* thresholds.
func withoutContainerFs(s *Scenario) *Scenario {
	t := *s
	c := &t.Config
	for _, m := range []*map[string]string{&c.Hard, &c.Soft, &c.Grace, &c.MinReclaim} {
		*m = maps.Clone(*m)
		maps.DeleteFunc(*m, func(k, _ string) bool { return strings.HasPrefix(k, "containerfs.") })
	}
	return &t
}

func configHas(s *Scenario, value string) bool {
	for _, m := range []map[string]string{s.Config.Hard, s.Config.Soft, s.Config.Grace, s.Config.MinReclaim} {
		for _, v := range m {
			if strings.Contains(v, value) {
				return true
			}
		}
	}
	return false
}

// containerFsMetAtFirstPass reports whether a configured containerfs.*
// threshold is met by the first pass's stats, computed here from the
// threshold's value and the containerfs figures of the summary.
func containerFsMetAtFirstPass(s *Scenario, up *Trace) bool {
	if up.ParseErr != nil {
		return false
	}
	parsed, err := upstreamSubject.parse(s.Config)
	if err != nil {
		return false
	}
	sum := newWorld(s).summary(&s.Passes[0], startTime.Add(s.Passes[0].Gap))
	fs := sum.Node.Runtime.ContainerFs
	for _, t := range parsed {
		var capacity, available uint64
		switch t.Signal {
		case evictionapi.SignalContainerFsAvailable:
			capacity, available = *fs.CapacityBytes, *fs.AvailableBytes
		case evictionapi.SignalContainerFsInodesFree:
			capacity, available = *fs.Inodes, *fs.InodesFree
		default:
			continue
		}
		if met(t.Value, capacity, available) {
			return true
		}
	}
	return false
}

// met is the threshold test: available below the value (a quantity, or a
// share of capacity).
func met(v evictionapi.ThresholdValue, capacity, available uint64) bool {
	if v.Quantity != nil {
		return int64(available) < v.Quantity.Value()
	}
	// A share is a whole number of bytes or inodes, rounded down.
	return int64(available) < int64(float64(v.Percentage)*float64(capacity))
}

// Deviation is a deliberate deviation as the report lists it.
type Deviation struct{ Name, Effect string }

// Deviations lists every deliberate deviation.
func Deviations() []Deviation {
	out := make([]Deviation, 0, len(deviations))
	for _, d := range deviations {
		out = append(out, Deviation{Name: d.name, Effect: d.effect})
	}
	return out
}

//evictkit:file fuzz

package eviction

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
	kubelettypes "k8s.io/kubernetes/pkg/kubelet/types"
)

// fzSignalNames are the short names fuzz inputs may use for signals. A
// name never changes meaning, whatever rows the signal table gains; full
// signal names work too, and any other key is used as it is.
var fzSignalNames = map[string]evictionapi.Signal{
	"mem":       evictionapi.SignalMemoryAvailable,
	"alloc":     evictionapi.SignalAllocatableMemoryAvailable,
	"nodefs":    evictionapi.SignalNodeFsAvailable,
	"nodefs.i":  evictionapi.SignalNodeFsInodesFree,
	"imagefs":   evictionapi.SignalImageFsAvailable,
	"imagefs.i": evictionapi.SignalImageFsInodesFree,
	"ctrfs":     evictionapi.SignalContainerFsAvailable,
	"ctrfs.i":   evictionapi.SignalContainerFsInodesFree,
	"pid":       evictionapi.SignalPIDAvailable,
	// An alpha feature's signals get their names in its fzAlphaFeature.
}

// fzParseMaps are the four eviction settings decoded from a fuzz input.
type fzParseMaps struct {
	hard, soft, grace, reclaim map[string]string
}

// fzDecodeParseSpec decodes "entry;entry;..." where each entry is
// "<m><key>=<value>": m picks the map (h, s, g or r; anything else picks
// by its byte value) and key is a signal, by a name of fzSignalNames or
// as it is.
func fzDecodeParseSpec(spec string) fzParseMaps {
	out := fzParseMaps{hard: map[string]string{}, soft: map[string]string{}, grace: map[string]string{}, reclaim: map[string]string{}}
	all := []map[string]string{out.hard, out.soft, out.grace, out.reclaim}
	for _, entry := range strings.Split(spec, ";") {
		if entry == "" {
			continue
		}
		var target map[string]string
		switch entry[0] {
		case 'h':
			target = out.hard
		case 's':
			target = out.soft
		case 'g':
			target = out.grace
		case 'r':
			target = out.reclaim
		default:
			target = all[int(entry[0])%4]
		}
		key, value, _ := strings.Cut(entry[1:], "=")
		if sig, ok := fzSignalNames[key]; ok {
			key = string(sig)
		}
		target[key] = value
	}
	return out
}

// fzParseOptions are the settings a fuzz input's option byte selects:
// bits 0-1 the node allocatable enforcement list, bit 2 the EvictionPSI
// gate (ignored by a build without it).
type fzParseOptions struct {
	allocatable []string
	psi         bool
}

func fzDecodeParseOptions(b byte) fzParseOptions {
	var o fzParseOptions
	switch b % 4 {
	case 1:
		o.allocatable = []string{kubelettypes.NodeAllocatableEnforcementKey}
	case 2:
		o.allocatable = []string{kubelettypes.SystemReservedEnforcementKey, kubelettypes.NodeAllocatableEnforcementKey}
	case 3:
		o.allocatable = []string{kubelettypes.KubeReservedEnforcementKey}
	}
	o.psi = b&4 != 0
	return o
}

// setGates sets the alpha features' gates as the options say.
func (o fzParseOptions) setGates(t *testing.T) {
	for _, f := range fzAlphaFeatures {
		if f.parseGates != nil {
			f.parseGates(t, o)
		}
	}
}

// fzHugeExponent matches decimal exponents of five digits or more.
var fzHugeExponent = regexp.MustCompile(`[eE][+-]?0*[1-9][0-9]{4,}`)

func fzThresholdString(t evictionapi.Threshold) string {
	v := "nil"
	if t.Value.Quantity != nil {
		v = t.Value.Quantity.String()
	}
	r := "nil"
	if t.MinReclaim != nil {
		if t.MinReclaim.Quantity != nil {
			r = t.MinReclaim.Quantity.String()
		} else {
			r = fmt.Sprintf("%g", t.MinReclaim.Percentage)
		}
	}
	return fmt.Sprintf("{%s %s q=%s p=%g grace=%s reclaim=%s}", t.Signal, t.Operator, v, t.Value.Percentage, t.GracePeriod, r)
}

func fzThresholdsString(ts []evictionapi.Threshold) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = fzThresholdString(t)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// fzParseSeed is a named input of FuzzParseThresholdConfig, with the
// outcome it is there for: the thresholds it parses to (wantCount), or an
// error naming a setting (wantErr, a substring).
// TestFuzzParseSeedsReachTheirOutcome holds each to it.
type fzParseSeed struct {
	name      string
	spec      string
	options   byte
	wantErr   string
	wantCount int
}

// fzParseSeeds are the core's named inputs (fzAllParseSeeds adds the
// alpha features').
var fzParseSeeds = []fzParseSeed{
	{"defaults-hard-with-allocatable", "hmem=100Mi;hnodefs=10%;hnodefs.i=5%;himagefs=15%;himagefs.i=5%;hpid=1000", 1, "", 7},
	{"soft-with-grace-and-reclaim", "smem=1Gi;gmem=1m30s;rmem=500Mi;snodefs=15%;gnodefs=2m;rnodefs=2%", 0, "", 2},
	{"soft-without-grace", "hmem=1Gi;snodefs=10%;gmem=1m", 0, "evictionSoft", 0},
	{"soft-zero-grace-allocatable", "smem=1Gi;gmem=0s;hmem=500Mi", 1, "", 4},
	{"disabled-by-percent", "hmem=0%;hnodefs=100%;himagefs=0.0%", 1, "", 1},
	{"negative-quantity", "hmem=-1Mi", 0, "evictionHard", 0},
	{"double-percent", "hmem=50%%;rmem=5%%%", 0, "", 1},
	{"nan-percent", "hmem=NaN%", 0, "evictionHard", 0},
	{"unknown-signal", "hbogus=1Gi", 0, "evictionHard", 0},
	{"negative-grace", "snodefs=10%;gnodefs=-1s", 0, "evictionSoftGracePeriod", 0},
	{"unknown-grace-key", "smem=1Gi;gmem=1s;gfoo=1s", 0, "evictionSoftGracePeriod", 0},
	{"containerfs-given", "hctrfs=1Gi;sctrfs.i=5%;gctrfs.i=10s;rctrfs=1Gi", 2, "", 2},
	{"zero-percent-reclaim", "hmem=1Gi;rmem=0%", 0, "evictionMinimumReclaim", 0},
	{"zero-quantity-reclaim", "hmem=1Gi;rmem=0", 1, "", 2},
	{"tiny-percentages", "hmem=1e-50%;rmem=1e-50%", 0, "evictionMinimumReclaim", 0},
	{"huge-quantities", "hmem=1Ei;rmem=9223372036854775807", 1, "", 2},
	{"allocatable-soft-only", "halloc=1Gi;salloc=2Gi;galloc=1h", 1, "", 2},
	{"pid-and-inodes", "hpid=10%;hctrfs.i=5%;hnodefs.i=1k", 0, "", 3},
}

func FuzzParseThresholdConfig(f *testing.F) {
	for _, seed := range fzAllParseSeeds() {
		f.Add(seed.spec, seed.options)
	}
	f.Fuzz(func(t *testing.T, spec string, options byte) {
		if fzHugeExponent.MatchString(spec) {
			// resource.ParseQuantity (apimachinery, used alike by upstream)
			// computes 10^exp with big integers: "1E6854775802" runs for
			// minutes. Not a property of this package.
			t.Skip("quantity exponent too large to parse in reasonable time")
		}
		maps := fzDecodeParseSpec(spec)
		opts := fzDecodeParseOptions(options)
		opts.setGates(t)
		got, err := ParseThresholdConfig(opts.allocatable, maps.hard, maps.soft, maps.grace, maps.reclaim)
		want, wantErr := refParse(opts, maps)
		switch {
		case err != nil && wantErr == nil:
			t.Fatalf("rejected (%v); the reference model accepts it as %s", err, fzThresholdsString(want))
		case err == nil && wantErr != nil:
			t.Fatalf("accepted as %s; the reference model rejects it: %v", fzThresholdsString(got), wantErr)
		case err != nil:
			if got != nil {
				t.Fatalf("error %v with thresholds %s", err, fzThresholdsString(got))
			}
			if setting := wantErr.(refParseError).setting; !strings.Contains(err.Error(), setting) {
				t.Fatalf("error %q does not name the setting %s (the model's reason: %v)", err, setting, wantErr)
			}
			return
		}
		if g, w := fzThresholdsString(got), fzThresholdsString(want); g != w {
			t.Fatalf("thresholds differ from the reference model's:\n got %s\nwant %s", g, w)
		}
	})
}

// refParseError is the reference parser's rejection: the setting at fault
// and why.
type refParseError struct{ setting, why string }

func (e refParseError) Error() string { return e.setting + ": " + e.why }

// refParse is the reference model of ParseThresholdConfig, from the
// kubelet's documentation of its eviction settings:
//
//   - every key of the four settings is a supported signal (the PSI ones
//     only with the EvictionPSI gate);
//   - a threshold is a quantity above zero, or a percentage (every
//     trailing "%" dropped) within [0, 100]; exactly "0%" or "100%"
//     turns the signal off; NaN is refused (a documented deviation);
//   - a PSI threshold is a share in percent, "%" optional, above 0 and
//     below 100, kept in thousandths of a percent, operator GreaterThan;
//     it takes no minimum reclaim;
//   - every soft threshold has a grace period, a duration not below 0;
//   - a minimum reclaim is a quantity not below zero or a percentage
//     above zero;
//   - the result is the hard thresholds, then the soft ones, each in the
//     fixed signal order, then, when node allocatable is enforced on
//     pods, an allocatableMemory.available copy of each hard
//     memory.available threshold.
func refParse(opts fzParseOptions, m fzParseMaps) ([]evictionapi.Threshold, error) {
	check := func(setting, key string) (refSignal, error) {
		sig, ok := refSignals[evictionapi.Signal(key)]
		if !ok || (sig.psi && !opts.psi) {
			return sig, refParseError{setting, fmt.Sprintf("signal %q not supported", key)}
		}
		return sig, nil
	}
	percent := func(s string) (float32, bool) {
		f, err := strconv.ParseFloat(strings.TrimRight(s, "%"), 32)
		if err != nil || math.IsNaN(f) {
			return 0, false
		}
		return float32(f) / 100, true
	}
	// Settings are checked in the kubelet's order: hard, soft, grace periods, minimum reclaim.
	parseSet := func(setting string, values map[string]string) ([]evictionapi.Threshold, error) {
		var out []evictionapi.Threshold
		for _, key := range refSortedKeys(values) {
			sig, err := check(setting, key)
			if err != nil {
				return nil, err
			}
			v := values[key]
			t := evictionapi.Threshold{Signal: evictionapi.Signal(key), Operator: evictionapi.OpLessThan}
			switch {
			case sig.psi:
				f, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), "%"), 64)
				if err != nil || math.IsNaN(f) || f <= 0 || f >= 100 {
					return nil, refParseError{setting, fmt.Sprintf("PSI share %q", v)}
				}
				t.Operator = "GreaterThan"
				t.Value.Quantity = resource.NewMilliQuantity(int64(math.Round(f*1000)), resource.DecimalSI)
			case strings.HasSuffix(v, "%"):
				if v == "0%" || v == "100%" {
					continue
				}
				p, ok := percent(v)
				if !ok || p < 0 || p > 1 {
					return nil, refParseError{setting, fmt.Sprintf("percentage %q", v)}
				}
				t.Value.Percentage = p
			default:
				q, err := resource.ParseQuantity(v)
				if err != nil || q.Sign() <= 0 {
					return nil, refParseError{setting, fmt.Sprintf("quantity %q", v)}
				}
				t.Value.Quantity = &q
			}
			out = append(out, t)
		}
		return out, nil
	}
	hard, err := parseSet("evictionHard", m.hard)
	if err != nil {
		return nil, err
	}
	soft, err := parseSet("evictionSoft", m.soft)
	if err != nil {
		return nil, err
	}
	grace := map[string]time.Duration{}
	for _, key := range refSortedKeys(m.grace) {
		if _, err := check("evictionSoftGracePeriod", key); err != nil {
			return nil, err
		}
		d, err := time.ParseDuration(m.grace[key])
		if err != nil || d < 0 {
			return nil, refParseError{"evictionSoftGracePeriod", fmt.Sprintf("duration %q", m.grace[key])}
		}
		grace[key] = d
	}
	reclaim := map[string]evictionapi.ThresholdValue{}
	for _, key := range refSortedKeys(m.reclaim) {
		sig, err := check("evictionMinimumReclaim", key)
		if err != nil {
			return nil, err
		}
		v := m.reclaim[key]
		if sig.psi {
			return nil, refParseError{"evictionMinimumReclaim", "a PSI signal has no minimum reclaim"}
		}
		if strings.HasSuffix(v, "%") {
			p, ok := percent(v)
			if !ok || p <= 0 {
				return nil, refParseError{"evictionMinimumReclaim", fmt.Sprintf("percentage %q", v)}
			}
			reclaim[key] = evictionapi.ThresholdValue{Percentage: p}
			continue
		}
		q, err := resource.ParseQuantity(v)
		if err != nil || q.Sign() < 0 {
			return nil, refParseError{"evictionMinimumReclaim", fmt.Sprintf("quantity %q", v)}
		}
		reclaim[key] = evictionapi.ThresholdValue{Quantity: &q}
	}
	for i := range soft {
		d, ok := grace[string(soft[i].Signal)]
		if !ok {
			return nil, refParseError{"evictionSoft", fmt.Sprintf("%s has no grace period", soft[i].Signal)}
		}
		soft[i].GracePeriod = d
	}
	out := append(hard, soft...)
	for i := range out {
		if r, ok := reclaim[string(out[i].Signal)]; ok {
			out[i].MinReclaim = &r
		}
	}
	for _, k := range opts.allocatable {
		if k != kubelettypes.NodeAllocatableEnforcementKey {
			continue
		}
		for _, t := range out[:len(out):len(out)] {
			if t.Signal == evictionapi.SignalMemoryAvailable && t.GracePeriod == 0 {
				out = append(out, evictionapi.Threshold{Signal: evictionapi.SignalAllocatableMemoryAvailable, Operator: t.Operator, Value: t.Value, MinReclaim: t.MinReclaim})
			}
		}
	}
	return out, nil
}

// refSortedKeys orders keys by the fixed signal order, unknown ones last
// by name, so that the first bad key is the same one for model and code.
func refSortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	order := func(k string) int {
		if s, ok := refSignals[evictionapi.Signal(k)]; ok {
			return s.order
		}
		return math.MaxInt
	}
	sort.Slice(keys, func(i, j int) bool {
		if oi, oj := order(keys[i]), order(keys[j]); oi != oj {
			return oi < oj
		}
		return keys[i] < keys[j]
	})
	return keys
}

// TestFuzzParseSeedsReachTheirOutcome holds each named seed of
// FuzzParseThresholdConfig to the outcome its name promises, so that a
// seed cannot silently stop exercising what it is there for.
func TestFuzzParseSeedsReachTheirOutcome(t *testing.T) {
	for _, seed := range fzAllParseSeeds() {
		t.Run(seed.name, func(t *testing.T) {
			maps := fzDecodeParseSpec(seed.spec)
			opts := fzDecodeParseOptions(seed.options)
			opts.setGates(t)
			got, err := ParseThresholdConfig(opts.allocatable, maps.hard, maps.soft, maps.grace, maps.reclaim)
			switch {
			case seed.wantErr != "" && err == nil:
				t.Fatalf("parsed as %s, want an error naming %s", fzThresholdsString(got), seed.wantErr)
			case seed.wantErr != "" && !strings.Contains(err.Error(), seed.wantErr):
				t.Fatalf("error %q, want one naming %s", err, seed.wantErr)
			case seed.wantErr == "" && err != nil:
				t.Fatalf("error %v, want %d thresholds", err, seed.wantCount)
			case seed.wantErr == "" && len(got) != seed.wantCount:
				t.Fatalf("%d thresholds %s, want %d", len(got), fzThresholdsString(got), seed.wantCount)
			}
		})
	}
}

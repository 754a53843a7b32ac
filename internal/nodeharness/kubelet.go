package nodeharness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"

	"github.com/evictkit/evictkit/internal/kindcluster"
)

// The kubelet's root directory and configuration file in a kind node, and
// where the original is kept while a test runs with a changed one.
const (
	kubeletRootDir      = "/var/lib/kubelet"
	kubeletConfigPath   = kindcluster.KubeletConfigPath
	kubeletConfigBackup = kindcluster.KubeletConfigBackup
)

// KubeletConfig reads the node's kubelet configuration file.
func (f *Framework) KubeletConfig(ctx context.Context) (*kubeletconfig.KubeletConfiguration, error) {
	raw, err := f.Exec(ctx, "cat", kubeletConfigPath)
	if err != nil {
		return nil, err
	}
	cfg := &kubeletconfig.KubeletConfiguration{}
	if err := yaml.UnmarshalStrict([]byte(raw), cfg); err != nil {
		return nil, fmt.Errorf("node %s: parsing %s: %w", f.Node, kubeletConfigPath, err)
	}
	return cfg, nil
}

// UpdateKubeletConfig changes the node's kubelet configuration the way
// upstream's node e2e does: the original file is kept aside (once), the
// changed file written, the kubelet restarted, and the call returns when
// the node is Ready again with the new configuration in effect (read back
// from the kubelet's /configz). RestoreKubeletConfig undoes it.
func (f *Framework) UpdateKubeletConfig(ctx context.Context, change func(*kubeletconfig.KubeletConfiguration)) error {
	if _, err := f.Exec(ctx, "sh", "-c", fmt.Sprintf("[ -e %[2]s ] || cp -a %[1]s %[2]s", kubeletConfigPath, kubeletConfigBackup)); err != nil {
		return err
	}
	cfg, err := f.KubeletConfig(ctx)
	if err != nil {
		return err
	}
	change(cfg)
	raw, err := yaml.Marshal(cfg)
	if err != nil {
		return err
	}
	tmp := kubeletConfigPath + ".evictkit-new"
	if _, err := f.ExecInput(ctx, bytes.NewReader(raw), "sh", "-c", fmt.Sprintf("cat >%s && mv %s %s", tmp, tmp, kubeletConfigPath)); err != nil {
		return err
	}
	return f.restartKubelet(ctx, cfg)
}

// RestoreKubeletConfig puts back the configuration UpdateKubeletConfig kept
// aside, restarts the kubelet and waits until it is in effect. Without a
// kept original it does nothing.
func (f *Framework) RestoreKubeletConfig(ctx context.Context) error {
	out, err := f.Exec(ctx, "sh", "-c", fmt.Sprintf("if [ -e %[2]s ]; then mv %[2]s %[1]s; echo restored; fi", kubeletConfigPath, kubeletConfigBackup))
	if err != nil || strings.TrimSpace(out) != "restored" {
		return err
	}
	cfg, err := f.KubeletConfig(ctx)
	if err != nil {
		return err
	}
	return f.restartKubelet(ctx, cfg)
}

// RestartKubelet restarts the kubelet with its configuration unchanged and
// waits until the node is Ready again with it in effect.
func (f *Framework) RestartKubelet(ctx context.Context) error {
	cfg, err := f.KubeletConfig(ctx)
	if err != nil {
		return err
	}
	return f.restartKubelet(ctx, cfg)
}

// restartKubelet restarts the kubelet and waits until the node has posted
// a Ready status since the restart and /configz shows want's eviction and
// allocatable settings.
func (f *Framework) restartKubelet(ctx context.Context, want *kubeletconfig.KubeletConfiguration) error {
	restarted := time.Now().Truncate(time.Second)
	if _, err := f.Exec(ctx, "systemctl", "restart", "kubelet"); err != nil {
		return err
	}
	// A restart we ask for is not counted (it resets the count); systemd
	// restarting a kubelet that exited is. A kubelet that refuses its
	// configuration lives for under a second of each restart cycle, so
	// the count is read whether or not a kubelet runs at that moment.
	base, err := f.kubeletRestarts(ctx)
	if err != nil {
		return err
	}
	var last string
	err = wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		if n, err := f.kubeletRestarts(ctx); err == nil && n > base {
			return false, fmt.Errorf("the kubelet exits with this configuration: %s", f.kubeletErrors(ctx, restarted))
		}
		if last = f.notReadySince(ctx, restarted); last != "" {
			return false, nil
		}
		got, err := f.RunningKubeletConfig(ctx)
		if err != nil {
			last = err.Error()
			return false, nil
		}
		if diff := configDiff(want, got); diff != "" {
			last = "configuration not in effect: " + diff
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		if !wait.Interrupted(err) {
			return fmt.Errorf("node %s: %w", f.Node, err)
		}
		return fmt.Errorf("node %s: kubelet not back within 3m after a restart: %s", f.Node, last)
	}
	return nil
}

// notReadySince says why the node has not posted a Ready status since a
// time; "" once it has.
func (f *Framework) notReadySince(ctx context.Context, since time.Time) string {
	n, err := f.GetNode(ctx)
	if err != nil {
		return err.Error()
	}
	if ready, heartbeat := kindcluster.NodeReady(n); !ready || heartbeat.Before(since) {
		return fmt.Sprintf("no Ready heartbeat since %s (ready=%v, last %s)", since.Format(time.RFC3339), ready, heartbeat.Format(time.RFC3339))
	}
	return ""
}

// KillKubelet ends the kubelet's process with SIGKILL, as a crash would,
// and waits until systemd has started a new one (kind's unit restarts it)
// and the node has posted a Ready status since. It returns the process
// that was killed and the one that replaced it.
func (f *Framework) KillKubelet(ctx context.Context) (was, now KubeletProcess, err error) {
	if was, err = f.KubeletProcess(ctx); err != nil {
		return was, now, err
	}
	killed := time.Now().Truncate(time.Second)
	if _, err = f.Exec(ctx, "kill", "-KILL", strconv.Itoa(was.PID)); err != nil {
		return was, now, fmt.Errorf("node %s: killing the kubelet (process %d): %w", f.Node, was.PID, err)
	}
	var last string
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := f.KubeletProcess(ctx)
		if err != nil || p.PID == was.PID {
			last = fmt.Sprintf("no new kubelet process yet (%v)", err)
			return false, nil
		}
		if last = f.notReadySince(ctx, killed); last != "" {
			return false, nil
		}
		now = p
		return true, nil
	})
	if err != nil {
		return was, now, fmt.Errorf("node %s: kubelet not back within 3m after SIGKILL: %s (%w)", f.Node, last, err)
	}
	return was, now, nil
}

// kubeletErrors returns the kubelet's last error lines since a time.
func (f *Framework) kubeletErrors(ctx context.Context, since time.Time) string {
	lines, err := f.KubeletJournal(ctx, since)
	if err != nil {
		return err.Error()
	}
	var errs []string
	for _, line := range lines {
		if strings.HasPrefix(line, "E") || strings.Contains(line, "command failed") {
			errs = append(errs, strings.TrimSpace(line))
		}
	}
	if len(errs) > 3 {
		errs = errs[len(errs)-3:]
	}
	return strings.Join(errs, " | ")
}

// GatesInEffect fails unless the running kubelet's /configz shows every
// gate of gates set as gates says.
func (f *Framework) GatesInEffect(ctx context.Context, gates map[string]bool) error {
	got, err := f.RunningKubeletConfig(ctx)
	if err != nil {
		return err
	}
	var wrong []string
	for gate, on := range gates {
		if g, ok := got.FeatureGates[gate]; !ok || g != on {
			wrong = append(wrong, fmt.Sprintf("%s=%v (set: %v), want %v", gate, g, ok, on))
		}
	}
	if len(wrong) > 0 {
		sort.Strings(wrong)
		return fmt.Errorf("node %s: feature gates not in effect in /configz: %s", f.Node, strings.Join(wrong, ", "))
	}
	return nil
}

// RunningKubeletConfig is the configuration the kubelet runs with, from its
// /configz endpoint (through the API server's node proxy).
func (f *Framework) RunningKubeletConfig(ctx context.Context) (*kubeletconfig.KubeletConfiguration, error) {
	raw, err := f.Client.CoreV1().RESTClient().Get().Resource("nodes").Name(f.Node).
		SubResource("proxy").Suffix("configz").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("node %s: reading /configz: %w", f.Node, err)
	}
	var got struct {
		Config kubeletconfig.KubeletConfiguration `json:"kubeletconfig"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		return nil, fmt.Errorf("node %s: parsing /configz: %w", f.Node, err)
	}
	return &got.Config, nil
}

// configDiff names the eviction and allocatable settings and the feature
// gates of want that got does not have. Threshold maps may hold more in got: the kubelet fills in
// defaults for signals a partial evictionHard leaves out.
func configDiff(want, got *kubeletconfig.KubeletConfiguration) string {
	var diffs []string
	subset := func(name string, w, g map[string]string) {
		for k, v := range w {
			if g[k] != v {
				diffs = append(diffs, fmt.Sprintf("%s[%s]=%q, want %q", name, k, g[k], v))
			}
		}
	}
	subset("evictionHard", want.EvictionHard, got.EvictionHard)
	subset("evictionSoft", want.EvictionSoft, got.EvictionSoft)
	subset("evictionSoftGracePeriod", want.EvictionSoftGracePeriod, got.EvictionSoftGracePeriod)
	subset("evictionMinimumReclaim", want.EvictionMinimumReclaim, got.EvictionMinimumReclaim)
	subset("kubeReserved", want.KubeReserved, got.KubeReserved)
	for gate, on := range want.FeatureGates {
		if g, ok := got.FeatureGates[gate]; !ok || g != on {
			diffs = append(diffs, fmt.Sprintf("featureGates[%s]=%v (set: %v), want %v", gate, g, ok, on))
		}
	}
	subset("systemReserved", want.SystemReserved, got.SystemReserved)
	same := func(name string, w, g any) {
		if !reflect.DeepEqual(w, g) {
			diffs = append(diffs, fmt.Sprintf("%s=%v, want %v", name, g, w))
		}
	}
	same("evictionMaxPodGracePeriod", want.EvictionMaxPodGracePeriod, got.EvictionMaxPodGracePeriod)
	same("evictionPressureTransitionPeriod", want.EvictionPressureTransitionPeriod, got.EvictionPressureTransitionPeriod)
	if len(want.EnforceNodeAllocatable) > 0 {
		same("enforceNodeAllocatable", want.EnforceNodeAllocatable, got.EnforceNodeAllocatable)
	}
	if want.LocalStorageCapacityIsolation != nil {
		same("localStorageCapacityIsolation", *want.LocalStorageCapacityIsolation, deref(got.LocalStorageCapacityIsolation))
	}
	if want.ImageGCHighThresholdPercent != nil {
		same("imageGCHighThresholdPercent", *want.ImageGCHighThresholdPercent, deref(got.ImageGCHighThresholdPercent))
	}
	if want.ImageGCLowThresholdPercent != nil {
		same("imageGCLowThresholdPercent", *want.ImageGCLowThresholdPercent, deref(got.ImageGCLowThresholdPercent))
	}
	return strings.Join(diffs, "; ")
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// KubeletProcess identifies the running kubelet: systemd's main PID and
// its count of automatic restarts. Both stay the same while the kubelet
// neither crashes nor is restarted.
type KubeletProcess struct {
	PID      int
	Restarts int
}

// KubeletProcess reads the kubelet unit's state from systemd in the node.
func (f *Framework) KubeletProcess(ctx context.Context) (KubeletProcess, error) {
	out, err := f.Exec(ctx, "systemctl", "show", "kubelet", "--property=MainPID,NRestarts")
	if err != nil {
		return KubeletProcess{}, err
	}
	props := parseProperties(out)
	var p KubeletProcess
	if p.PID, err = strconv.Atoi(props["MainPID"]); err != nil || p.PID == 0 {
		return p, fmt.Errorf("node %s: kubelet has no main process (systemctl show: %q)", f.Node, strings.TrimSpace(out))
	}
	if p.Restarts, err = strconv.Atoi(props["NRestarts"]); err != nil {
		return p, fmt.Errorf("node %s: systemctl show kubelet: NRestarts: %w", f.Node, err)
	}
	return p, nil
}

// kubeletRestarts reads systemd's count of automatic restarts of the
// kubelet unit since it was last started or restarted by hand.
func (f *Framework) kubeletRestarts(ctx context.Context) (int, error) {
	out, err := f.Exec(ctx, "systemctl", "show", "kubelet", "--property=NRestarts")
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(parseProperties(out)["NRestarts"])
	if err != nil {
		return 0, fmt.Errorf("node %s: systemctl show kubelet: NRestarts: %w", f.Node, err)
	}
	return n, nil
}

// parseProperties reads systemctl show's KEY=VALUE lines.
func parseProperties(out string) map[string]string {
	props := map[string]string{}
	for line := range strings.Lines(out) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
			props[k] = v
		}
	}
	return props
}

// WithThresholds returns m with the given signals set, for building a
// kubelet configuration's threshold maps from the file's current ones.
func WithThresholds(m map[string]string, set map[string]string) map[string]string {
	out := maps.Clone(m)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, set)
	return out
}

// UseKubelet switches the node under test to the other kubelet (which is
// KubeletEvictkit or KubeletUpstream), restarting it, and returns once the
// node is Ready on it. The kubelet configuration is left as it is.
func (f *Framework) UseKubelet(ctx context.Context, which string) error {
	if err := kindcluster.SwitchKubelet(ctx, f.clusterOptions(), f.Node, which); err != nil {
		return err
	}
	f.Kubelet = which
	return nil
}

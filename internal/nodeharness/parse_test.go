package nodeharness

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/ptr"
)

func TestParseEvictionCounts(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    map[string]int
		wantErr string
	}{
		{name: "no evictions yet", in: "# TYPE kubelet_running_pods gauge\nkubelet_running_pods 3\n", want: map[string]int{}},
		{
			name: "two signals",
			in: "# HELP kubelet_evictions [ALPHA] Cumulative number of pod evictions by eviction signal\n" +
				"# TYPE kubelet_evictions counter\n" +
				"kubelet_evictions{eviction_signal=\"memory.available\"} 2\n" +
				"kubelet_evictions{eviction_signal=\"nodefs.available\"} 1\n",
			want: map[string]int{"memory.available": 2, "nodefs.available": 1},
		},
		{
			name:    "sample without its label",
			in:      "# TYPE kubelet_evictions counter\nkubelet_evictions 1\n",
			wantErr: "without an eviction_signal label",
		},
		{name: "not the text format", in: "kubelet_evictions{ 1\n", wantErr: "parsing the kubelet's metrics"},
		{
			name: "the dry run's counter is another metric",
			in: "# TYPE kubelet_evictions_dry_run counter\n" +
				"kubelet_evictions_dry_run{eviction_signal=\"memory.available\"} 4\n",
			want: map[string]int{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseSignalCounts([]byte(tt.in), evictionsMetric)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func TestConfigDiff(t *testing.T) {
	base := func() *kubeletconfig.KubeletConfiguration {
		return &kubeletconfig.KubeletConfiguration{
			EvictionHard:                     map[string]string{"memory.available": "100Mi"},
			EvictionPressureTransitionPeriod: metav1.Duration{Duration: 30 * time.Second},
		}
	}
	tests := []struct {
		name   string
		change func(got *kubeletconfig.KubeletConfiguration)
		want   string
	}{
		{name: "same", change: func(*kubeletconfig.KubeletConfiguration) {}},
		{
			name:   "defaults filled in by the kubelet do not count",
			change: func(g *kubeletconfig.KubeletConfiguration) { g.EvictionHard["nodefs.available"] = "10%" },
		},
		{
			name:   "threshold not in effect",
			change: func(g *kubeletconfig.KubeletConfiguration) { g.EvictionHard["memory.available"] = "200Mi" },
			want:   `evictionHard[memory.available]="200Mi", want "100Mi"`,
		},
		{
			name: "transition period differs",
			change: func(g *kubeletconfig.KubeletConfiguration) {
				g.EvictionPressureTransitionPeriod.Duration = 5 * time.Minute
			},
			want: "evictionPressureTransitionPeriod",
		},
		{
			name:   "local storage isolation off",
			change: func(g *kubeletconfig.KubeletConfiguration) { g.LocalStorageCapacityIsolation = ptr.To(false) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := base()
			tt.change(got)
			diff := configDiff(base(), got)
			if tt.want == "" && diff != "" {
				t.Fatalf("diff = %q, want none", diff)
			}
			if tt.want != "" && !strings.Contains(diff, tt.want) {
				t.Fatalf("diff = %q, want it to contain %q", diff, tt.want)
			}
		})
	}
	want := base()
	want.LocalStorageCapacityIsolation = ptr.To(true)
	got := base()
	got.LocalStorageCapacityIsolation = ptr.To(false)
	if diff := configDiff(want, got); !strings.Contains(diff, "localStorageCapacityIsolation") {
		t.Fatalf("a wanted localStorageCapacityIsolation that is off: diff = %q", diff)
	}
}

func TestParseProperties(t *testing.T) {
	got := parseProperties("MainPID=1234\nNRestarts=0\nweird line\n")
	if got["MainPID"] != "1234" || got["NRestarts"] != "0" || len(got) != 2 {
		t.Fatalf("got %v", got)
	}
}

func TestObservations(t *testing.T) {
	u := func(v uint64) *uint64 { return &v }
	summary := func() *statsapi.Summary {
		return &statsapi.Summary{Node: statsapi.NodeStats{
			Memory:  &statsapi.MemoryStats{AvailableBytes: u(800), WorkingSetBytes: u(200)},
			Fs:      &statsapi.FsStats{AvailableBytes: u(5000), InodesFree: u(70)},
			Runtime: &statsapi.RuntimeStats{ImageFs: &statsapi.FsStats{AvailableBytes: u(4000), InodesFree: u(60)}},
			Rlimit:  &statsapi.RlimitStats{MaxPID: ptr.To[int64](32768), NumOfRunningProcesses: ptr.To[int64](768)},
			SystemContainers: []statsapi.ContainerStats{
				{Name: statsapi.SystemContainerPods, Memory: &statsapi.MemoryStats{WorkingSetBytes: u(50)}},
			},
		}}
	}
	o, err := observations(summary())
	if err != nil {
		t.Fatal(err)
	}
	want := Observations{MemoryAvailable: 800, MemoryCapacity: 1000, PodsMemoryWorkingSet: 50, NodeFsAvailable: 5000,
		NodeFsInodesFree: 70, ImageFsAvailable: 4000, ImageFsInodesFree: 60, PIDAvailable: 32000}
	if o != want {
		t.Fatalf("got %+v, want %+v", o, want)
	}
	partial := summary()
	partial.Node.Rlimit = nil
	partial.Node.Fs.InodesFree = nil
	_, err = observations(partial)
	if err == nil || !strings.Contains(err.Error(), "node.fs.inodesFree") || !strings.Contains(err.Error(), "node.rlimit") {
		t.Fatalf("error = %v, want it to name node.fs.inodesFree and node.rlimit", err)
	}
}

func TestTakenAfter(t *testing.T) {
	stopped := time.Date(2026, 12, 1, 18, 12, 0, 0, time.UTC)
	mem := func(at time.Time) *statsapi.MemoryStats { return &statsapi.MemoryStats{Time: metav1.NewTime(at)} }
	summary := func(node, pods *statsapi.MemoryStats) *statsapi.Summary {
		s := &statsapi.Summary{Node: statsapi.NodeStats{Memory: node}}
		if pods != nil {
			s.Node.SystemContainers = []statsapi.ContainerStats{{Name: statsapi.SystemContainerPods, Memory: pods}}
		}
		return s
	}
	before, after := stopped.Add(-time.Second), stopped.Add(time.Second)
	tests := []struct {
		name string
		s    *statsapi.Summary
		t    time.Time
		want bool
	}{
		{name: "no pods stopped yet", s: summary(mem(before), mem(before)), want: true},
		{name: "both taken since", s: summary(mem(after), mem(after)), t: stopped, want: true},
		{name: "node figures from before", s: summary(mem(before), mem(after)), t: stopped, want: false},
		{name: "pods cgroup figures from before", s: summary(mem(after), mem(before)), t: stopped, want: false},
		{name: "taken at the very moment", s: summary(mem(stopped), mem(stopped)), t: stopped, want: false},
		{name: "no node memory figures", s: summary(nil, mem(after)), t: stopped, want: false},
		{name: "no pods cgroup", s: summary(mem(after), nil), t: stopped, want: true},
	}
	for _, tt := range tests {
		if got := takenAfter(tt.s, tt.t); got != tt.want {
			t.Errorf("%s: takenAfter = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestKeep(t *testing.T) {
	for tags, want := range map[string]bool{
		"registry.k8s.io/kube-proxy:v1.37.2":      true,
		"registry.k8s.io/coredns/coredns:v1.14.6": true,
		"registry.k8s.io/pause:3.10.2":            true,
		"registry.k8s.io/kube-apiserver:v1.37.2":  false,
		"registry.k8s.io/kube-proxy-evil:v1":      false,
		"evictkit.local/workload:0123456789ab":    false,
	} {
		if got := keep([]string{tags}); got != want {
			t.Errorf("keep(%s) = %v, want %v", tags, got, want)
		}
	}
}

func TestParseStatfs(t *testing.T) {
	tests := []struct {
		out     string
		lines   int
		want    []int64
		wantErr bool
	}{
		{out: "183869 4096\n", lines: 1, want: []int64{183869 * 4096}},
		{out: "0 1024", lines: 1, want: []int64{0}},
		{out: "10 4096\n20 1024\n", lines: 2, want: []int64{10 * 4096, 20 * 1024}},
		{out: "10 4096\n", lines: 2, wantErr: true},
		{out: "10 4096\n20 1024\n", lines: 1, wantErr: true},
		{out: "", lines: 1, wantErr: true},
		{out: "183869", lines: 1, wantErr: true},
		{out: "many 4096", lines: 1, wantErr: true},
		{out: "10 0", lines: 1, wantErr: true},
		{out: "-1 4096", lines: 1, wantErr: true},
		{out: "10 4096\n-1 4096", lines: 2, wantErr: true},
	}
	for _, tt := range tests {
		got, err := parseStatfs(tt.out, tt.lines)
		if (err != nil) != tt.wantErr || !slices.Equal(got, tt.want) {
			t.Errorf("parseStatfs(%q, %d) = %v, %v; want %v, error %v", tt.out, tt.lines, got, err, tt.want, tt.wantErr)
		}
		if err != nil && !strings.Contains(err.Error(), "statfs") {
			t.Errorf("parseStatfs(%q, %d) error %q does not say what was parsed", tt.out, tt.lines, err)
		}
	}
}

func TestDumpDir(t *testing.T) {
	tests := []struct{ spec, want string }{
		{"Memory pressure evicts the hog", "logs/Memory-pressure-evicts-the-hog"},
		{"[It] a/b c: d", "logs/It-a-b-c-d"},
		{"keep_this-and.that", "logs/keep_this-and.that"},
		{strings.Repeat("x", 200), "logs/" + strings.Repeat("x", 120)},
	}
	for _, tt := range tests {
		if got := DumpDir("logs", tt.spec); got != tt.want {
			t.Errorf("DumpDir(logs, %q) = %q, want %q", tt.spec, got, tt.want)
		}
	}
}

func TestParseLogLines(t *testing.T) {
	raw := "2026-12-01T06:30:00.123456789Z memory: 100 MiB of 200 MiB\n" +
		"2026-12-01T06:30:01.5Z received terminated with 120 MiB taken\n\n"
	got, err := parseLogLines(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := []LogLine{
		{Time: time.Date(2026, 12, 1, 6, 30, 0, 123456789, time.UTC), Text: "memory: 100 MiB of 200 MiB"},
		{Time: time.Date(2026, 12, 1, 6, 30, 1, 500000000, time.UTC), Text: "received terminated with 120 MiB taken"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseLogLines = %+v, want %+v", got, want)
	}
	if _, err := parseLogLines("unable to retrieve container logs for containerd://5c1f\n"); !errors.Is(err, errLogUnavailable) {
		t.Errorf("the kubelet's answer for a log it cannot read: error %v, want errLogUnavailable", err)
	}
}

func TestContainerEnded(t *testing.T) {
	running := corev1.ContainerStatus{State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	exited := corev1.ContainerStatus{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137}}}
	waiting := corev1.ContainerStatus{State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}
	for _, tc := range []struct {
		name  string
		phase corev1.PodPhase
		cs    []corev1.ContainerStatus
		want  bool
	}{
		{"running pod", corev1.PodRunning, []corev1.ContainerStatus{running}, false},
		{"evicted, container in its grace period", corev1.PodFailed, []corev1.ContainerStatus{running}, false},
		{"evicted before the kubelet saw the container run", corev1.PodFailed, []corev1.ContainerStatus{waiting}, false},
		{"evicted, container exited", corev1.PodFailed, []corev1.ContainerStatus{exited}, true},
		{"succeeded", corev1.PodSucceeded, []corev1.ContainerStatus{exited}, true},
		{"failed without statuses", corev1.PodFailed, nil, true},
		{"pending", corev1.PodPending, nil, false},
	} {
		p := &corev1.Pod{Status: corev1.PodStatus{Phase: tc.phase, ContainerStatuses: tc.cs}}
		if got := containerEnded(p); got != tc.want {
			t.Errorf("%s: containerEnded = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestParseEvictionTimes(t *testing.T) {
	ref := time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)
	lines := []string{
		`I1202 00:44:58.328618   24580 evict.go:62] "Eviction manager: pod is evicted successfully" pod="ns/besteffort"`,
		`I1202 00:44:58.328671   24580 manager.go:242] "Eviction manager: pods evicted, waiting for pod to be cleaned up" pods=["ns/besteffort"]`,
		`I1202 00:45:01.000002   24580 eviction_manager.go:658] "Eviction manager: pod is evicted successfully" pod="ns/burstable"`,
		`I1202 00:45:09.000000   24580 evict.go:62] "Eviction manager: pod is evicted successfully" pod="ns/besteffort"`,
		`I1231 23:59:59.999999   24580 evict.go:62] "Eviction manager: pod is evicted successfully" pod="ns/last-year"`,
		// A kill that outlasts the kubelet's wait: still an eviction.
		`E1202 00:46:12.876702    2179 evict.go:70] "Eviction manager: pod failed to evict" err="timeout waiting to kill pod" pod="ns/slow-kill"`,
		`I1202 00:46:13.000000    2179 kubelet.go:1] "Eviction manager: pod is not evicted successfully" pod="ns/not-a-match"`,
	}
	got, err := parseEvictionTimes(lines, ref)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]time.Time{
		"ns/besteffort": time.Date(2026, 12, 2, 0, 44, 58, 328618000, time.UTC),
		"ns/burstable":  time.Date(2026, 12, 2, 0, 45, 1, 2000, time.UTC),
		"ns/last-year":  time.Date(2025, 12, 31, 23, 59, 59, 999999000, time.UTC),
		"ns/slow-kill":  time.Date(2026, 12, 2, 0, 46, 12, 876702000, time.UTC),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseEvictionTimes = %v, want %v", got, want)
	}
}

func TestParseKubeconfigServer(t *testing.T) {
	conf := "apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: x\n    server: https://evictkit-control-plane:6443\n  name: default\n"
	if h, p, err := ParseKubeconfigServer(conf); err != nil || h != "evictkit-control-plane" || p != "6443" {
		t.Errorf("= %q, %q, %v; want evictkit-control-plane, 6443", h, p, err)
	}
	if h, p, err := ParseKubeconfigServer("    server: https://10.0.0.1\n"); err != nil || h != "10.0.0.1" || p != "443" {
		t.Errorf("no port: %q, %q, %v; want 10.0.0.1, 443", h, p, err)
	}
	for _, bad := range []string{"", "server: a\nserver: b\n", "server: ::nope\n"} {
		if _, _, err := ParseKubeconfigServer(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

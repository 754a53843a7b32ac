package kernellog

import (
	"strings"
	"testing"
	"time"
)

func TestParseOOMKills(t *testing.T) {
	// The first line is a kill on a kind node (cgroup v1, systemd driver)
	// on 2026-12-07, the path's node part shortened; the others are made
	// in its form: a kill at the container's own limit, one on a cgroup v2
	// node at the pods' cgroup, one with the cgroupfs driver at the pod's
	// own limit, a global OOM, a kill outside any pod, and one in a static
	// pod (its UID a hash).
	const v1 = "/evictkit/4726c2f4/kubelet.slice/kubelet-kubepods.slice"
	dmesg := strings.Join([]string{
		"2026-12-07T02:28:51,862153+00:00 Memory cgroup out of memory: Killed process 31284 (workload)",
		"2026-12-07T02:28:51,862150+00:00 oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=cri-containerd-37b1.scope,mems_allowed=0," +
			"oom_memcg=" + v1 + ",task_memcg=" + v1 + "/kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-pod9ba3e8e1_5492_4682_a6fa_b7278dce8328.slice/cri-containerd-2fbf.scope,task=workload,pid=31284,uid=0",
		"2026-12-07T02:30:00,000001+00:00 oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=cri-containerd-aa.scope,mems_allowed=0," +
			"oom_memcg=" + v1 + "/kubelet-kubepods-pod11111111_2222_3333_4444_555555555555.slice/cri-containerd-aa.scope,task_memcg=" + v1 + "/kubelet-kubepods-pod11111111_2222_3333_4444_555555555555.slice/cri-containerd-aa.scope,task=workload,pid=7,uid=0",
		"2026-12-07T02:31:00,5+00:00 ignored: not a kill line",
		"2026-12-07T02:32:00,000000+00:00 oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/kubepods.slice," +
			"task_memcg=/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podabcdef01_2345_6789_abcd_ef0123456789.slice/cri-containerd-bb.scope,task=workload,pid=8,uid=0",
		"2026-12-07T02:33:00,000000+00:00 oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/kubepods/burstable/podabcdef01-2345-6789-abcd-ef0123456780," +
			"task_memcg=/kubepods/burstable/podabcdef01-2345-6789-abcd-ef0123456780/cc,task=workload,pid=9,uid=0",
		"2026-12-07T02:34:00,000000+00:00 oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom," +
			"task_memcg=/kubepods/besteffort/pod00000000-0000-0000-0000-00000000000a/dd,task=workload,pid=10,uid=0",
		"2026-12-07T02:35:00,000000+00:00 oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/system.slice/x.service,task=x,pid=11,uid=0",
		"2026-12-07T02:36:00,000000+00:00 oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/kubepods," +
			"task_memcg=/kubepods/besteffort/pod0123456789abcdef0123456789abcdef/ee,task=workload,pid=12,uid=0",
	}, "\n")
	got, err := ParseOOMKills(dmesg)
	if err != nil {
		t.Fatal(err)
	}
	at := func(s string) time.Time { return time.Date(2026, 12, 7, 2, 0, 0, 0, time.UTC).Add(mustDuration(t, s)) }
	want := []OOMKill{
		{At: at("28m51.86215s"), PodUID: "9ba3e8e1-5492-4682-a6fa-b7278dce8328", PID: 31284},
		{At: at("30m0.000001s"), PodUID: "11111111-2222-3333-4444-555555555555", PID: 7, OwnLimit: true},
		{At: at("32m"), PodUID: "abcdef01-2345-6789-abcd-ef0123456789", PID: 8},
		{At: at("33m"), PodUID: "abcdef01-2345-6789-abcd-ef0123456780", PID: 9, OwnLimit: true},
		{At: at("34m"), PodUID: "00000000-0000-0000-0000-00000000000a", PID: 10},
		{At: at("36m"), PodUID: "0123456789abcdef0123456789abcdef", PID: 12},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d kills, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if !got[i].At.Equal(want[i].At) || got[i].PodUID != want[i].PodUID || got[i].PID != want[i].PID || got[i].OwnLimit != want[i].OwnLimit {
			t.Errorf("kill %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestParseOOMKillsRejectsWhatItCannotRead(t *testing.T) {
	for _, line := range []string{
		"[ 1234.5] oom-kill:constraint=CONSTRAINT_MEMCG,task_memcg=/kubepods/pod00000000-0000-0000-0000-00000000000a,pid=1", // not --time-format iso
		"2026-12-07T02:34:00,000000+00:00 oom-kill:constraint=CONSTRAINT_MEMCG,task_memcg=/kubepods/pod00000000-0000-0000-0000-00000000000a,task=x",
	} {
		if _, err := ParseOOMKills(line); err == nil {
			t.Errorf("no error for %q", line)
		}
	}
}

func mustDuration(t *testing.T, s string) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

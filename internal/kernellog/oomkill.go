package kernellog

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// OOMKill is one kill of the kernel's OOM killer in a pod, as the
// kernel logged it. The kernel's log is the record to count: a container's
// status is not (on cgroup v1 the kernel tells every memory cgroup under
// the one that hit its limit, and containerd then reports each of their
// containers as OOMKilled when it ends, however it ends).
type OOMKill struct {
	At time.Time
	// PodUID is the API UID of the pod whose process was killed.
	PodUID string
	// PID of the process killed: with At, it tells one kill from another.
	PID int
	// OwnLimit: the limit that was hit is the pod's or its container's
	// own. Otherwise it was a cgroup above the pod (the pods' cgroup, a
	// QoS class's) or the node's memory, which the kubelet's evictions
	// must keep the pods from reaching.
	OwnLimit bool
}

// dmesgTime is the timestamp of dmesg --time-format iso.
const dmesgTime = "2006-01-02T15:04:05,000000-07:00"

var (
	oomKillLine = regexp.MustCompile(`^(\S+) oom-kill:(\S+)$`)
	// podCgroup finds a pod's UID in a cgroup path: kubepods-...-pod<uid>
	// with the systemd driver (dashes as underscores), pod<uid> with
	// cgroupfs; a static pod's UID is a hash of 32 hex digits.
	podCgroup = regexp.MustCompile(`pod([0-9a-f]{8}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{12}|[0-9a-f]{32})`)
)

// ParseOOMKills reads the kill lines of `dmesg --time-format iso`
// ("<time> oom-kill:constraint=...,oom_memcg=...,task_memcg=...,pid=N,...")
// and returns the kills of processes in pods. Other lines are skipped; a
// kill line it cannot read is an error, so that no kill goes uncounted.
func ParseOOMKills(dmesg string) ([]OOMKill, error) {
	var out []OOMKill
	for _, line := range strings.Split(dmesg, "\n") {
		line = strings.TrimSpace(line)
		if !strings.Contains(line, " oom-kill:") {
			continue
		}
		m := oomKillLine.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("an OOM kill line not in the form <time> oom-kill:<fields>: %q", line)
		}
		at, err := time.Parse(dmesgTime, m[1])
		if err != nil {
			return nil, fmt.Errorf("an OOM kill line's time: %w: %q", err, line)
		}
		fields := map[string]string{}
		for _, kv := range strings.Split(m[2], ",") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				fields[k] = v
			}
		}
		pod := podCgroup.FindStringSubmatch(fields["task_memcg"])
		if pod == nil {
			continue // not a pod's process
		}
		pid, err := strconv.Atoi(fields["pid"])
		if err != nil {
			return nil, fmt.Errorf("an OOM kill line without the process's pid: %q", line)
		}
		k := OOMKill{At: at, PodUID: strings.ReplaceAll(pod[1], "_", "-"), PID: pid}
		// A global OOM names no oom_memcg; a limit above the pod names a
		// cgroup without the pod in it.
		limit := podCgroup.FindStringSubmatch(fields["oom_memcg"])
		k.OwnLimit = limit != nil && strings.ReplaceAll(limit[1], "_", "-") == k.PodUID
		out = append(out, k)
	}
	return out, nil
}

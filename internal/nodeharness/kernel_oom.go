package nodeharness

import (
	"context"

	"github.com/evictkit/evictkit/internal/kernellog"
)

// KernelOOMKills reads the kernel's log in the node (the host's kernel on
// kind, the VM's on the cgroup v2 node) and returns the OOM killer's kills
// of processes in pods that it still holds. The ring buffer is finite: a
// caller that must see every kill reads it often.
func (f *Framework) KernelOOMKills(ctx context.Context) ([]kernellog.OOMKill, error) {
	out, err := f.Exec(ctx, "sh", "-c", "dmesg --time-format iso | grep -F ' oom-kill:' || true")
	if err != nil {
		return nil, err
	}
	return kernellog.ParseOOMKills(out)
}

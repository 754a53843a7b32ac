//evictkit:file notifier

package eviction

import "context"

// noopCgroupNotifier stands in for a kernel notifier where none can be
// registered: on platforms without cgroups, and on cgroup v2 hosts, whose
// memory controller has no cgroup.event_control threshold interface. It never
// sends an event; memory thresholds are then only acted on when the manager
// next looks at the stats.
type noopCgroupNotifier struct{}

var _ CgroupNotifier = noopCgroupNotifier{}

// Start returns at once: there is nothing to wait for.
func (noopCgroupNotifier) Start(context.Context, chan<- struct{}) {}

// Stop does nothing.
func (noopCgroupNotifier) Stop() {}

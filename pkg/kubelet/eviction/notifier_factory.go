//evictkit:file notifier

package eviction

import (
	"time"

	"k8s.io/klog/v2"
)

// notifierRefreshInterval is the shortest time between two re-armings of the
// memory threshold notifiers. Re-arming means tearing down and registering a
// kernel notification, so doing it on every synchronize pass would be wasteful.
const notifierRefreshInterval = 10 * time.Second

// CgroupNotifierFactory is the NotifierFactory backed by the kernel: it hands
// out notifiers made by NewCgroupNotifier.
type CgroupNotifierFactory struct{}

var _ NotifierFactory = &CgroupNotifierFactory{}

// NewCgroupNotifier returns NewCgroupNotifier(logger, path, attribute, threshold).
func (n *CgroupNotifierFactory) NewCgroupNotifier(logger klog.Logger, path, attribute string, threshold int64) (CgroupNotifier, error) {
	return NewCgroupNotifier(logger, path, attribute, threshold)
}

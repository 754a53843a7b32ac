//evictkit:file notifier
//go:build !linux

package eviction

import (
	"errors"

	"k8s.io/klog/v2"
)

// NewCgroupNotifier returns a notifier that never fires: cgroup threshold
// notifications only exist on Linux.
func NewCgroupNotifier(logger klog.Logger, path, attribute string, threshold int64) (CgroupNotifier, error) {
	logger.V(5).Info("Cgroup threshold notifications are not available on this platform", "path", path, "attribute", attribute)
	return noopCgroupNotifier{}, nil
}

// memoryControllerMount fails: there is no memory cgroup controller here.
func memoryControllerMount() (string, error) {
	return "", errors.New("memory cgroup mount point not found: cgroups are only available on Linux")
}

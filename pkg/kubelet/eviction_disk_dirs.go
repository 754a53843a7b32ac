package kubelet

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/evictkit/evictkit/pkg/kubelet/eviction"
)

// evictionDiskDirs is what the eviction manager is started with when
// EvictionDiskFastPath is on: the stats provider's answers about the
// filesystem layout, and where the filesystems, the pods' directories and
// their logs are, for the disk fast path's own reads.
type evictionDiskDirs struct {
	eviction.DiskInfoProvider
	rootDir    string
	podDir     func(types.UID) string
	podLogsDir func(namespace, name string, uid types.UID) string
	// imageFsInfo is the runtime's CRI ImageFsInfo.
	imageFsInfo func(context.Context) (*runtimeapi.ImageFsInfoResponse, error)
}

// NodeFsDir is the kubelet's root directory, on nodefs.
func (d evictionDiskDirs) NodeFsDir() string { return d.rootDir }

// GetPodDir returns the pod's directory, as the kubelet's GetPodDir does.
func (d evictionDiskDirs) GetPodDir(podUID types.UID) string { return d.podDir(podUID) }

// PodLogsDir returns the directory of the pod's container logs.
func (d evictionDiskDirs) PodLogsDir(namespace, name string, podUID types.UID) string {
	return d.podLogsDir(namespace, name, podUID)
}

// ImageFsDir returns the mount point the runtime reports for its first
// image filesystem.
func (d evictionDiskDirs) ImageFsDir(ctx context.Context) (string, error) {
	info, err := d.imageFsInfo(ctx)
	if err != nil {
		return "", err
	}
	for _, fs := range info.GetImageFilesystems() {
		if mp := fs.GetFsId().GetMountpoint(); mp != "" {
			return mp, nil
		}
	}
	return "", errors.New("the runtime reports no image filesystem with a mount point")
}

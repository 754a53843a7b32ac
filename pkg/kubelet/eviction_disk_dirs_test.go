package kubelet

import (
	"context"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The eviction manager finds the directories by asserting these methods
// on what it is started with; the layout answers are the stats provider's.
func TestEvictionDiskDirs(t *testing.T) {
	info := &runtimeapi.ImageFsInfoResponse{ImageFilesystems: []*runtimeapi.FilesystemUsage{
		{FsId: &runtimeapi.FilesystemIdentifier{}},
		{FsId: &runtimeapi.FilesystemIdentifier{Mountpoint: "/var/lib/containerd/snapshots"}},
	}}
	var d any = evictionDiskDirs{
		DiskInfoProvider: layoutOnly{},
		rootDir:          "/var/lib/kubelet",
		podDir:           func(uid types.UID) string { return "/var/lib/kubelet/pods/" + string(uid) },
		podLogsDir: func(ns, name string, uid types.UID) string {
			return "/var/log/pods/" + ns + "_" + name + "_" + string(uid)
		},
		imageFsInfo: func(context.Context) (*runtimeapi.ImageFsInfoResponse, error) { return info, nil },
	}
	dirs, ok := d.(interface {
		NodeFsDir() string
		ImageFsDir(context.Context) (string, error)
		GetPodDir(types.UID) string
		PodLogsDir(string, string, types.UID) string
	})
	if !ok {
		t.Fatal("evictionDiskDirs lacks a method the disk fast path asserts")
	}
	if got := dirs.NodeFsDir(); got != "/var/lib/kubelet" {
		t.Errorf("NodeFsDir = %q", got)
	}
	if got := dirs.GetPodDir("abc"); got != "/var/lib/kubelet/pods/abc" {
		t.Errorf("GetPodDir = %q", got)
	}
	if got := dirs.PodLogsDir("ns", "p", "abc"); got != "/var/log/pods/ns_p_abc" {
		t.Errorf("PodLogsDir = %q", got)
	}
	if got, err := dirs.ImageFsDir(context.Background()); got != "/var/lib/containerd/snapshots" || err != nil {
		t.Errorf("ImageFsDir = %q, %v; want the first mount point reported", got, err)
	}
	if _, ok := d.(interface{ GetPodDir(types.UID) string }); !ok {
		t.Error("without GetPodDir, EvictionResumeAfterRestart would find no pod directories")
	}

	for name, f := range map[string]func(context.Context) (*runtimeapi.ImageFsInfoResponse, error){
		"runtime error": func(context.Context) (*runtimeapi.ImageFsInfoResponse, error) { return nil, errors.New("unavailable") },
		"no mount point": func(context.Context) (*runtimeapi.ImageFsInfoResponse, error) {
			return &runtimeapi.ImageFsInfoResponse{}, nil
		},
	} {
		e := d.(evictionDiskDirs)
		e.imageFsInfo = f
		if got, err := e.ImageFsDir(context.Background()); err == nil || got != "" {
			t.Errorf("%s: ImageFsDir = %q, %v; want an error", name, got, err)
		}
	}
}

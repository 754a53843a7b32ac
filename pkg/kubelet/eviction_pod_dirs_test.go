package kubelet

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

type layoutOnly struct{}

func (layoutOnly) HasDedicatedImageFs(context.Context) (bool, error)     { return true, nil }
func (layoutOnly) HasDedicatedContainerFs(context.Context) (bool, error) { return false, nil }

// The eviction manager finds the pod directories by asserting GetPodDir on
// what it is started with; the layout answers are the stats provider's.
func TestEvictionDiskInfo(t *testing.T) {
	var d any = evictionDiskInfo{DiskInfoProvider: layoutOnly{}, podDir: func(uid types.UID) string { return "/var/lib/kubelet/pods/" + string(uid) }}
	p, ok := d.(interface{ GetPodDir(types.UID) string })
	if !ok {
		t.Fatal("evictionDiskInfo has no GetPodDir")
	}
	if got := p.GetPodDir("abc"); got != "/var/lib/kubelet/pods/abc" {
		t.Errorf("GetPodDir = %q", got)
	}
	if img, err := d.(evictionDiskInfo).HasDedicatedImageFs(context.Background()); !img || err != nil {
		t.Errorf("HasDedicatedImageFs = %v, %v; want the provider's true, nil", img, err)
	}
}

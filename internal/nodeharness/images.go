package nodeharness

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/evictkit/evictkit/internal/kindcluster"
)

// pinnedLabel makes containerd's CRI report an image as pinned; the
// kubelet's image garbage collection never removes pinned images. Nothing
// can be pulled on these nodes, so losing the workload image to a disk
// test's image GC would break every later test.
const pinnedLabel = "io.cri-containerd.pinned=pinned"

// loadWorkloadImage builds the workload image (when its binary changed),
// loads it into the cluster's nodes and pins it, and the addons' images, on
// the node under test.
func (f *Framework) loadWorkloadImage(ctx context.Context) error {
	name, archive, err := kindcluster.WorkloadImage(f.Root)
	if err != nil {
		return err
	}
	if err := kindcluster.LoadImage(f.clusterOptions(), name, archive); err != nil {
		return err
	}
	f.Image = name
	return f.pinImages(ctx, name)
}

// pinImages pins name and the addon images (keepImages) on the node, so
// that the kubelet's image garbage collection under disk pressure leaves
// them: none of them can be pulled again.
func (f *Framework) pinImages(ctx context.Context, name string) error {
	out, err := f.Exec(ctx, "ctr", "--namespace", "k8s.io", "images", "list", "--quiet")
	if err != nil {
		return err
	}
	pin := []string{name}
	for ref := range strings.Lines(out) {
		ref = strings.TrimSpace(ref)
		if keep([]string{ref}) {
			pin = append(pin, ref)
		}
	}
	for _, ref := range pin {
		if _, err := f.Exec(ctx, "ctr", "--namespace", "k8s.io", "images", "label", ref, pinnedLabel); err != nil {
			return fmt.Errorf("pinning %s: %w", ref, err)
		}
	}
	return nil
}

// criImage is what crictl prints about an image.
type criImage struct {
	ID       string   `json:"id"`
	RepoTags []string `json:"repoTags"`
	Pinned   bool     `json:"pinned"`
}

// keepImages are never pruned: the addons a node may have to start again.
var keepImages = []string{"registry.k8s.io/kube-proxy:", "registry.k8s.io/coredns/", "registry.k8s.io/pause:"}

// PruneImages removes the node's images that no container uses, except
// pinned ones and the addons' (keepImages). Disk tests call it first so
// that the kubelet's own image garbage collection has nothing to free and
// pressure is relieved only by what the test expects. It returns the
// removed images' tags.
func (f *Framework) PruneImages(ctx context.Context) ([]string, error) {
	out, err := f.Exec(ctx, "crictl", "images", "-o", "json")
	if err != nil {
		return nil, err
	}
	var images struct {
		Images []criImage `json:"images"`
	}
	if err := json.Unmarshal([]byte(out), &images); err != nil {
		return nil, fmt.Errorf("node %s: parsing crictl images: %w", f.Node, err)
	}
	out, err = f.Exec(ctx, "crictl", "ps", "-a", "-o", "json")
	if err != nil {
		return nil, err
	}
	var containers struct {
		Containers []struct {
			ImageRef string `json:"imageRef"`
		} `json:"containers"`
	}
	if err := json.Unmarshal([]byte(out), &containers); err != nil {
		return nil, fmt.Errorf("node %s: parsing crictl ps: %w", f.Node, err)
	}
	used := map[string]bool{}
	for _, c := range containers.Containers {
		used[c.ImageRef] = true
	}
	var removed []string
	for _, img := range images.Images {
		if img.Pinned || used[img.ID] || keep(img.RepoTags) {
			continue
		}
		if _, err := f.Exec(ctx, "crictl", "rmi", img.ID); err != nil {
			return removed, err
		}
		removed = append(removed, strings.Join(img.RepoTags, ","))
	}
	return removed, nil
}

func keep(tags []string) bool {
	return slices.ContainsFunc(tags, func(t string) bool {
		return slices.ContainsFunc(keepImages, func(prefix string) bool { return strings.HasPrefix(t, prefix) })
	})
}

// LoadBallast loads a ballast image of size bytes (kindcluster.BallastImage)
// into the node under test, unpinned and unused: the first thing image
// garbage collection removes. It returns the image's name.
func (f *Framework) LoadBallast(ctx context.Context, size int64) (string, error) {
	name, archive, err := kindcluster.BallastImage(f.Root, size)
	if err != nil {
		return "", err
	}
	if f.HasImage(ctx, name) {
		return name, nil
	}
	a, err := os.Open(archive)
	if err != nil {
		return "", err
	}
	defer a.Close()
	if err := kindcluster.ImportImage(f.node, a); err != nil {
		return "", fmt.Errorf("loading %s into %s: %w", name, f.Node, err)
	}
	if !f.HasImage(ctx, name) {
		return "", fmt.Errorf("node %s: %s not listed by the CRI after loading it", f.Node, name)
	}
	return name, nil
}

// HasImage reports whether the node's CRI lists the image.
func (f *Framework) HasImage(ctx context.Context, name string) bool {
	_, err := f.Exec(ctx, "crictl", "inspecti", name)
	return err == nil
}

package kindcluster

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"

	"github.com/evictkit/evictkit/internal/vmnode"
)

// WorkloadImage builds test/images/workload as a FROM-scratch image named
// evictkit.local/workload:<hash of the binary> (skipped when the engine has
// it) and saves it as an archive to load into nodes. It returns the image
// name and the archive's path.
func WorkloadImage(root string) (name, archive string, err error) {
	dir := filepath.Join(root, "_output", "build", "workload")
	rootfs := filepath.Join(dir, "rootfs")
	if err := os.MkdirAll(filepath.Join(rootfs, "tmp"), 0o755); err != nil {
		return "", "", err
	}
	if err := os.Chmod(filepath.Join(rootfs, "tmp"), 0o1777); err != nil {
		return "", "", err
	}
	bin := filepath.Join(rootfs, "workload")
	build := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags", "-s -w", "-o", bin, "./test/images/workload")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("building test/images/workload: %w: %s", err, out)
	}
	sum, err := fileSHA256(bin)
	if err != nil {
		return "", "", err
	}
	name = "evictkit.local/workload:" + sum[:12]
	archive, err = dirImage(dir, rootfs, name, sum[:12], `ENTRYPOINT ["/workload"]`)
	return name, archive, err
}

// BallastImage builds evictkit.local/ballast:<size in MiB>mi, a FROM-scratch
// image holding one file of size bytes of pseudo-random (incompressible,
// but always the same) data and no program: an image no pod uses, for
// image garbage collection to remove.
func BallastImage(root string, size int64) (name, archive string, err error) {
	tag := fmt.Sprintf("%dmi", size>>20)
	dir := filepath.Join(root, "_output", "build", "ballast-"+tag)
	rootfs := filepath.Join(dir, "rootfs")
	if err := os.MkdirAll(rootfs, 0o755); err != nil {
		return "", "", err
	}
	file := filepath.Join(rootfs, "ballast")
	if st, err := os.Stat(file); err != nil || st.Size() != size {
		if err := writePseudoRandom(file, size); err != nil {
			return "", "", err
		}
	}
	name = "evictkit.local/ballast:" + tag
	archive, err = dirImage(dir, rootfs, name, tag)
	return name, archive, err
}

// writePseudoRandom fills path with size bytes from a fixed-seed ChaCha8
// stream.
func writePseudoRandom(path string, size int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	src := rand.NewChaCha8([32]byte{'e', 'v', 'i', 'c', 't', 'k', 'i', 't'})
	if _, err := io.CopyN(f, src, size); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}

// dirImage imports rootfs as the image name (unless the engine has it;
// changes are Dockerfile instructions such as ENTRYPOINT) and saves it to
// dir/<id>.tar (unless that exists), returning the archive's path.
func dirImage(dir, rootfs, name, id string, changes ...string) (string, error) {
	archive := filepath.Join(dir, id+".tar")
	if _, err := os.Stat(archive); err == nil {
		return archive, nil
	}
	if err := run("docker", "image", "inspect", name); err != nil {
		args := []string{"import"}
		for _, c := range changes {
			args = append(args, "--change", c)
		}
		tar := exec.Command("tar", "-C", rootfs, "--numeric-owner", "--owner=0", "--group=0", "-c", ".")
		imp := exec.Command("docker", append(args, "-", name)...)
		pipe, err := tar.StdoutPipe()
		if err != nil {
			return "", err
		}
		imp.Stdin = pipe
		if err := tar.Start(); err != nil {
			return "", err
		}
		out, ierr := imp.CombinedOutput()
		terr := tar.Wait()
		if ierr != nil || terr != nil {
			return "", fmt.Errorf("docker import %s: %v %v: %s", name, ierr, terr, out)
		}
	}
	if err := run("docker", "save", "-o", archive+".partial", name); err != nil {
		return "", err
	}
	return archive, os.Rename(archive+".partial", archive)
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// loadImage imports an image archive into every node's containerd, skipping
// nodes that have the image already.
func (s *session) loadImage(name, archive string) error {
	nodes, err := s.provider.ListInternalNodes(s.cfg.Name)
	if err != nil {
		return err
	}
	vms, err := vmnode.List(vmnode.StateDir(), s.cfg.Name)
	if err != nil {
		return err
	}
	for _, vm := range vms {
		nodes = append(nodes, vm)
	}
	for _, n := range nodes {
		if _, err := nodeutils.ImageID(n, name); err == nil {
			continue
		}
		f, err := os.Open(archive)
		if err != nil {
			return err
		}
		err = ImportImage(n, f)
		f.Close()
		if err != nil {
			return fmt.Errorf("loading %s into %s: %w", name, n.String(), err)
		}
	}
	return nil
}

// nodeSnapshotter is the snapshotter of the node image's containerd
// (/etc/containerd/config.toml): images are unpacked for it.
const nodeSnapshotter = "overlayfs"

// ImportImage imports an image archive into a node's containerd, for its
// CRI. Unlike kind's nodeutils.LoadImageArchive it creates no extra
// "import-<date>@<digest>" image: the CRI does not list that name, so
// removing the image through the CRI (the kubelet's image garbage
// collection, crictl rmi) would leave it behind, holding the image's
// content and snapshots on the disk.
func ImportImage(n nodes.Node, archive io.Reader) error {
	cmd := n.Command("ctr", "--namespace=k8s.io", "images", "import", "--all-platforms",
		"--snapshotter="+nodeSnapshotter, "-").SetStdin(archive)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("node %s: importing an image archive: %w", n.String(), err)
	}
	return nil
}

// LoadImage imports an image archive into every node of the cluster that
// does not have the image yet.
func LoadImage(o Options, name, archive string) error {
	s, err := newSession(o)
	if err != nil {
		return err
	}
	return s.loadImage(name, archive)
}

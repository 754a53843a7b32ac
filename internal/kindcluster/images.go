package kindcluster

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"sigs.k8s.io/kind/pkg/cluster/nodeutils"
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
	archive = filepath.Join(dir, sum[:12]+".tar")
	if _, err := os.Stat(archive); err == nil {
		return name, archive, nil
	}
	if err := run("docker", "image", "inspect", name); err != nil {
		tar := exec.Command("tar", "-C", rootfs, "--numeric-owner", "--owner=0", "--group=0", "-c", ".")
		imp := exec.Command("docker", "import", "--change", `ENTRYPOINT ["/workload"]`, "-", name)
		pipe, err := tar.StdoutPipe()
		if err != nil {
			return "", "", err
		}
		imp.Stdin = pipe
		if err := tar.Start(); err != nil {
			return "", "", err
		}
		out, ierr := imp.CombinedOutput()
		terr := tar.Wait()
		if ierr != nil || terr != nil {
			return "", "", fmt.Errorf("docker import %s: %v %v: %s", name, ierr, terr, out)
		}
	}
	if err := run("docker", "save", "-o", archive, name); err != nil {
		return "", "", err
	}
	return name, archive, nil
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
	for _, n := range nodes {
		if _, err := nodeutils.ImageID(n, name); err == nil {
			continue
		}
		f, err := os.Open(archive)
		if err != nil {
			return err
		}
		err = nodeutils.LoadImageArchive(n, f)
		f.Close()
		if err != nil {
			return fmt.Errorf("loading %s into %s: %w", name, n.String(), err)
		}
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

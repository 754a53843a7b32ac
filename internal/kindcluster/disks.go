package kindcluster

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
)

// Dedicated filesystems for nodes that ask for them (LabelNodefsSize,
// LabelImagefsSize): a sparse image file per filesystem under
// <state>/disks/<cluster>/<node>/, formatted ext4 with no reserved blocks,
// loop-mounted on the host and bind-mounted into the node container before
// it starts:
//
//	nodefs/kubelet     -> /var/lib/kubelet     (the kubelet's root dir)
//	nodefs/pod-logs    -> /var/log/pods        (container logs count as nodefs)
//	nodefs/containerd  -> /var/lib/containerd  (one fs for both), or
//	imagefs/containerd -> /var/lib/containerd  (split imagefs)
//
// containerd's directory is seeded from the node image, so the preloaded
// images are there. Pressure on these filesystems takes hundreds of MiB,
// not the host disk's tens of GiB. Everything is undone by removeDisks.

// disksDir is where a cluster's disk images and mount points live.
func disksDir(stateDir, cluster string) string {
	return filepath.Join(stateDir, "disks", cluster)
}

// prepareDisks creates and mounts the filesystems of every request and adds
// the bind mounts to the matching nodes of cfg.
func prepareDisks(p progress, cfg *v1alpha4.Cluster, reqs []diskRequest, stateDir, image string) error {
	names := nodeNames(cfg)
	for _, req := range reqs {
		dir := filepath.Join(disksDir(stateDir, cfg.Name), req.node)
		nodefs, err := makeDisk(dir, "nodefs", req.nodefs.Value())
		if err != nil {
			return fmt.Errorf("node %s: %w", req.node, err)
		}
		containerdFS := nodefs
		if req.split() {
			if containerdFS, err = makeDisk(dir, "imagefs", req.imagefs.Value()); err != nil {
				return fmt.Errorf("node %s: %w", req.node, err)
			}
		}
		for _, sub := range []string{"kubelet", "pod-logs"} {
			if err := os.MkdirAll(filepath.Join(nodefs, sub), 0o755); err != nil {
				return err
			}
		}
		if err := seedContainerd(image, filepath.Join(containerdFS, "containerd")); err != nil {
			return fmt.Errorf("node %s: %w", req.node, err)
		}
		mounts := []v1alpha4.Mount{
			{HostPath: filepath.Join(nodefs, "kubelet"), ContainerPath: "/var/lib/kubelet"},
			{HostPath: filepath.Join(nodefs, "pod-logs"), ContainerPath: "/var/log/pods"},
			{HostPath: filepath.Join(containerdFS, "containerd"), ContainerPath: "/var/lib/containerd"},
		}
		for i := range cfg.Nodes {
			if names[i] == req.node {
				cfg.Nodes[i].ExtraMounts = append(cfg.Nodes[i].ExtraMounts, mounts...)
			}
		}
		layout := "nodefs and imagefs on one filesystem"
		if req.split() {
			layout = fmt.Sprintf("imagefs %s on its own filesystem", req.imagefs.String())
		}
		p.note("%s: nodefs %s (%s)", req.node, req.nodefs.String(), layout)
	}
	return nil
}

// makeDisk creates DIR/NAME.img of size bytes, formats it and mounts it at
// DIR/NAME, returning the mount point.
func makeDisk(dir, name string, size int64) (string, error) {
	img := filepath.Join(dir, name+".img")
	mnt := filepath.Join(dir, name)
	if mounted, err := isMountPoint(mnt); err != nil {
		return "", err
	} else if mounted {
		return "", fmt.Errorf("%s is already mounted: a previous cluster was not taken down (run: make cluster-down)", mnt)
	}
	if err := os.MkdirAll(mnt, 0o755); err != nil {
		return "", err
	}
	f, err := os.Create(img)
	if err != nil {
		return "", err
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return "", fmt.Errorf("sizing %s: %w", img, err)
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	if err := run("mkfs.ext4", "-q", "-F", "-m", "0", "-L", "evictkit-"+name, img); err != nil {
		return "", err
	}
	// -o loop sets the loop device to clear itself when unmounted.
	if err := run("mount", "-o", "loop", img, mnt); err != nil {
		return "", err
	}
	return mnt, nil
}

// seedContainerd copies the node image's /var/lib/containerd (the preloaded
// images) into dst.
func seedContainerd(image, dst string) error {
	if err := os.MkdirAll(dst, 0o711); err != nil {
		return err
	}
	return run("docker", "run", "--rm", "--network", "none", "--entrypoint", "/bin/cp",
		"-v", dst+":/evictkit-dst", image, "-a", "/var/lib/containerd/.", "/evictkit-dst/")
}

// removeDisks unmounts and deletes every filesystem of the cluster, and
// detaches any loop device still backed by one of its images. Idempotent.
func removeDisks(p progress, stateDir, cluster string) error {
	dir := disksDir(stateDir, cluster)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	mounts, err := mountsBelow(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, m := range mounts {
		if err := run("umount", m); err != nil {
			p.note("umount %s failed (%v); detaching it lazily", m, err)
			if err := run("umount", "-l", m); err != nil {
				errs = append(errs, err)
			}
		}
	}
	imgs, _ := filepath.Glob(filepath.Join(dir, "*", "*.img"))
	for _, img := range imgs {
		out, err := exec.Command("losetup", "-n", "-O", "NAME", "-j", img).Output()
		if err != nil {
			errs = append(errs, fmt.Errorf("losetup -j %s: %w", img, err))
			continue
		}
		for _, dev := range strings.Fields(string(out)) {
			if err := run("losetup", "-d", dev); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if len(mounts) > 0 {
		p.note("unmounted %d dedicated filesystem(s) under %s", len(mounts), dir)
	}
	return os.RemoveAll(dir)
}

// mountsBelow lists mount points at or below dir, deepest first.
func mountsBelow(dir string) ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) < 5 {
			continue
		}
		mp := unescapeMountPath(fields[4])
		if mp == dir || strings.HasPrefix(mp, dir+"/") {
			out = append(out, mp)
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(out)))
	return out, s.Err()
}

func isMountPoint(path string) (bool, error) {
	mounts, err := mountsBelow(path)
	if err != nil {
		return false, err
	}
	for _, m := range mounts {
		if m == path {
			return true, nil
		}
	}
	return false, nil
}

// unescapeMountPath undoes mountinfo's octal escapes (\040 for a space...).
func unescapeMountPath(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var v byte
			if _, err := fmt.Sscanf(s[i+1:i+4], "%03o", &v); err == nil {
				b.WriteByte(v)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

package kindcluster

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestDedicatedFilesystemLifecycle makes a real loop-mounted filesystem the
// way prepareDisks does and checks that removeDisks leaves no mount, no loop
// device and no file behind, and is idempotent.
func TestDedicatedFilesystemLifecycle(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: it formats and loop-mounts a filesystem image")
	}
	for _, tool := range []string{"mkfs.ext4", "mount", "umount", "losetup"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s: %v", tool, err)
		}
	}
	state := t.TempDir()
	const cluster = "unit"
	dir := filepath.Join(disksDir(state, cluster), "unit-worker")
	const size = 300 << 20
	mnt, err := makeDisk(dir, "nodefs", size)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = removeDisks(progress{out: io.Discard}, state, cluster) })

	if mounted, err := isMountPoint(mnt); err != nil || !mounted {
		t.Fatalf("%s mounted = %v, %v; want true", mnt, mounted, err)
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(mnt, &st); err != nil {
		t.Fatal(err)
	}
	if total := int64(st.Blocks) * st.Bsize; total > size || total < size*8/10 {
		t.Errorf("filesystem size %d, want about %d", total, size)
	}
	// No root-reserved blocks (mkfs's default keeps 5 %): nearly all that
	// is free is available to the kubelet; ext4 still holds back a small
	// pool of clusters for delayed allocation.
	if st.Bavail < st.Bfree*97/100 {
		t.Errorf("available blocks %d of %d free: reserved blocks were not disabled", st.Bavail, st.Bfree)
	}
	if _, err := makeDisk(dir, "nodefs", size); err == nil || !strings.Contains(err.Error(), "already mounted") {
		t.Errorf("making the same disk twice: error %v, want one saying it is already mounted", err)
	}

	img := filepath.Join(dir, "nodefs.img")
	for i := 0; i < 2; i++ { // the second call finds nothing to do
		if err := removeDisks(progress{out: io.Discard}, state, cluster); err != nil {
			t.Fatalf("removeDisks (call %d): %v", i+1, err)
		}
	}
	if mounts, err := mountsBelow(state); err != nil || len(mounts) != 0 {
		t.Errorf("mounts left below %s: %v (%v)", state, mounts, err)
	}
	if out, _ := exec.Command("losetup", "-n", "-j", img).Output(); len(strings.TrimSpace(string(out))) != 0 {
		t.Errorf("loop device left on %s: %s", img, out)
	}
	if _, err := os.Stat(disksDir(state, cluster)); !os.IsNotExist(err) {
		t.Errorf("%s still exists (err %v)", disksDir(state, cluster), err)
	}
}

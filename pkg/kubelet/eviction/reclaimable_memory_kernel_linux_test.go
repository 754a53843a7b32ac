//evictkit:file EvictionReclaimableMemory
//go:build linux

package eviction

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The reclaimable rule on the real kernel (cgroup v1 on these hosts, v2 in
// the VM of make test-cgroupv2): a helper in a test cgroup writes a file
// on a disk and reads it twice, so the kernel puts its pages on the
// active list, where upstream's working set counts them. The reclaimable
// working set must leave nearly all of them out; with the file mapped and
// touched it must not (mapped pages are not dropped for free). The file's
// size is the oracle: what the kernel charged for it, not what the rule
// computed.
func TestReclaimableRuleOnRealKernel(t *testing.T) {
	const size = 64 << 20
	dir := diskTempDir(t)
	for _, tc := range []struct {
		name   string
		mapped bool
	}{{name: "clean cache read twice"}, {name: "the same, mapped and touched", mapped: true}} {
		t.Run(tc.name, func(t *testing.T) {
			cg := newTestCgroup(t, "")
			env := []string{cacheDirEnv + "=" + dir, cacheBytesEnv + "=" + strconv.Itoa(size)}
			if tc.mapped {
				env = append(env, cacheMapEnv+"=1")
			}
			startChild(t, cg.dir, "page-cache", env...).waitReady(t, time.Minute)

			r := &memcgReader{mount: cg.mount, v2: cg.v2}
			upstream, err := r.workingSet(cg.dir)
			if err != nil {
				t.Fatal(err)
			}
			r.reclaimable = true
			reclaimable, err := r.workingSet(cg.dir)
			if err != nil {
				t.Fatal(err)
			}
			mappedKey := "total_mapped_file"
			if cg.v2 {
				mappedKey = "file_mapped"
			}
			t.Logf("usage %d MiB, mapped %d MiB: upstream's working set %d MiB, reclaimable rule's %d MiB",
				cg.usage(t, cg.dir)>>20, cgroupStat(t, cg.dir, mappedKey)>>20, upstream>>20, reclaimable>>20)
			// The premise: read twice, the file is on the active list and
			// upstream's working set counts (nearly) all of it.
			if upstream < size*3/4 {
				t.Fatalf("upstream's working set is %d MiB with a %d MiB file read twice: the kernel did not activate its pages, the test shows nothing", upstream>>20, size>>20)
			}
			if tc.mapped {
				if upstream-reclaimable > size/8 {
					t.Errorf("mapped: the rule left out %d MiB of a mapped file's %d MiB", (upstream-reclaimable)>>20, size>>20)
				}
				return
			}
			if upstream-reclaimable < size*3/4 {
				t.Errorf("clean: the rule left out only %d MiB of a clean cached file's %d MiB", (upstream-reclaimable)>>20, size>>20)
			}
		})
	}
}

// diskTempDir is a temporary directory on a disk, not a tmpfs (whose
// pages are shmem, never file cache): the test's own, else /var/tmp.
func diskTempDir(t *testing.T) string {
	t.Helper()
	for _, dir := range []string{t.TempDir(), "/var/tmp"} {
		var st unix.Statfs_t
		if err := unix.Statfs(dir, &st); err == nil && st.Type != unix.TMPFS_MAGIC {
			return dir
		}
	}
	cannotRun(t, "", "no temporary directory on a disk (tmpfs pages are not file cache)")
	return ""
}

// The page cache helper: writes EVICTION_TEST_CACHE_BYTES to a file in
// EVICTION_TEST_CACHE_DIR (removed at once, kept open), fsyncs it, reads
// it twice; with EVICTION_TEST_CACHE_MAP=1 maps it and touches every page
// too. Says ready and keeps it until stdin closes.
const (
	cacheDirEnv   = "EVICTION_TEST_CACHE_DIR"
	cacheBytesEnv = "EVICTION_TEST_CACHE_BYTES"
	cacheMapEnv   = "EVICTION_TEST_CACHE_MAP"
)

func init() {
	childRoles["page-cache"] = func() {
		done := childWaitForGo()
		if err := cacheFile(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Stdout.WriteString("ready\n")
		<-done
	}
}

// touched keeps the reads of the mapped pages from being optimized away.
var touched int

func cacheFile() error {
	n, err := strconv.Atoi(os.Getenv(cacheBytesEnv))
	if err != nil {
		return fmt.Errorf("%s: %w", cacheBytesEnv, err)
	}
	f, err := os.CreateTemp(os.Getenv(cacheDirEnv), "page-cache-")
	if err != nil {
		return err
	}
	if err := os.Remove(f.Name()); err != nil {
		return err
	}
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	for done := 0; done < n; done += len(buf) {
		if _, err := f.Write(buf); err != nil {
			return err
		}
	}
	if err := f.Sync(); err != nil {
		return err
	}
	for range 2 {
		if _, err := io.CopyBuffer(io.Discard, io.NewSectionReader(f, 0, int64(n)), buf); err != nil {
			return err
		}
	}
	if os.Getenv(cacheMapEnv) == "1" {
		m, err := syscall.Mmap(int(f.Fd()), 0, n, syscall.PROT_READ, syscall.MAP_SHARED)
		if err != nil {
			return err
		}
		for i := 0; i < n; i += os.Getpagesize() {
			touched += int(m[i])
		}
		// The mapping stays for the process's life, and f stays open.
	}
	return nil
}

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
// active list (on these hosts it does), where upstream's working set
// counts them. The reclaimable working set must leave nearly all of the
// file out, on whichever list the kernel keeps it; with the file mapped
// and touched it must keep it (mapped pages are not dropped for free).
// The file's size is the oracle, not what the rule computed.
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
			usage := cg.usage(t, cg.dir)
			if tc.mapped {
				if reclaimable < size*3/4 {
					t.Errorf("mapped: the rule's working set is %d MiB: it left out the mapped file's %d MiB", reclaimable>>20, size>>20)
				}
				return
			}
			if reclaimable > usage-size*3/4 {
				t.Errorf("clean: the rule's working set is %d MiB of %d MiB usage: it counts the clean cached file's %d MiB", reclaimable>>20, usage>>20, size>>20)
			}
			// Where the kernel moved the pages to the active list (read
			// twice: it does on these hosts), upstream counts them.
			if upstream >= size*3/4 {
				t.Logf("upstream's working set counts the file: its pages are active")
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

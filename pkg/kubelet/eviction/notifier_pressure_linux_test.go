//evictkit:file EvictionCgroupV2Notifier
//go:build linux

package eviction

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
	"k8s.io/klog/v2/ktesting"
)

// pageCacheThrashEnv names the file the page-cache thrasher reads.
const pageCacheThrashEnv = "EVICTION_TEST_THRASH_FILE"

// The page-cache thrasher: says ready, then reads the file named by
// pageCacheThrashEnv from start to end until stdin closes. In a memory
// cgroup smaller than the file, the kernel keeps reclaiming and
// refaulting its pages: a memory stall.
func init() {
	childRoles["page-cache-thrash"] = func() {
		done := childWaitForGo()
		path := os.Getenv(pageCacheThrashEnv)
		os.Stdout.WriteString("ready\n")
		buf := make([]byte, 1<<20)
		for {
			select {
			case <-done:
				return
			default:
			}
			f, err := os.Open(path)
			if err != nil {
				os.Exit(3)
			}
			_, _ = io.CopyBuffer(io.Discard, struct{ io.Reader }{f}, buf)
			f.Close()
		}
	}
}

// runPressureNotifier starts n with a handler that passes messages on;
// the returned channel is closed when Start returns.
func runPressureNotifier(ctx context.Context, n *pressureNotifier) (<-chan string, <-chan struct{}) {
	msgs := make(chan string, 16)
	n.handler = func(m string) {
		select {
		case msgs <- m:
		default:
		}
	}
	done := make(chan struct{})
	go func() { defer close(done); n.Start(ctx) }()
	return msgs, done
}

// startArmed runs n (until the test ends, or cancel) and returns once it
// has armed its sources.
func startArmed(t *testing.T, n *pressureNotifier) (<-chan string, <-chan struct{}, context.CancelFunc) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	armed := make(chan struct{})
	n.onArmed = func() { close(armed) }
	msgs, done := runPressureNotifier(ctx, n)
	select {
	case <-armed:
	case <-done:
		t.Fatal("the notifier armed nothing")
	case <-time.After(5 * time.Second):
		t.Fatal("not armed within 5 s")
	}
	return msgs, done, cancel
}

func expectMessage(t *testing.T, msgs <-chan string, within time.Duration, want string) {
	t.Helper()
	select {
	case m := <-msgs:
		if !strings.Contains(m, want) {
			t.Errorf("notification %q, want one with %q", m, want)
		}
	case <-time.After(within):
		t.Fatalf("no notification within %s", within)
	}
}

func expectStopped(t *testing.T, done <-chan struct{}) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Start did not return within 5 s of its context's end")
	}
}

// The memory.events watch, on real files: the pods' cgroup directory is a
// temporary one, where memory.pressure is a plain file (a trigger written
// to it is just data, and it never signals).
func TestPressureNotifierMemoryEvents(t *testing.T) {
	mount := t.TempDir()
	pods := filepath.Join(mount, "kubepods")
	if err := os.Mkdir(pods, 0o755); err != nil {
		t.Fatal(err)
	}
	events := filepath.Join(pods, "memory.events")
	for _, f := range []string{events, filepath.Join(pods, "memory.pressure")} {
		if err := os.WriteFile(f, []byte("low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	th := hard(sigAlloc, "500Mi")
	n := newPressureNotifier(th, mount, "kubepods", nil)
	if n.eventsFile != events || n.pressureFile != filepath.Join(pods, "memory.pressure") {
		t.Fatalf("notifier watches %s and %s", n.pressureFile, n.eventsFile)
	}
	msgs, done, cancel := startArmed(t, n)
	for range 2 {
		if err := os.WriteFile(events, []byte("low 0\nhigh 0\nmax 1\noom 0\noom_kill 0\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		expectMessage(t, msgs, 5*time.Second, "memory.events changed")
	}
	cancel()
	expectStopped(t, done)
}

func TestPressureNotifierWithoutSources(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	dir := t.TempDir()
	n := newPressureNotifier(hard(sigAlloc, "500Mi"), dir, "missing", nil)
	_, done := runPressureNotifier(ctx, n)
	expectStopped(t, done)
	if n := newPressureNotifier(hard(sigMem, "500Mi"), dir, "kubepods", nil); n.pressureFile != procPressureMemory || n.eventsFile != "" {
		t.Errorf("the node's notifier watches %q and %q, want %s and no memory.events", n.pressureFile, n.eventsFile, procPressureMemory)
	}
}

// A real PSI trigger on /proc/pressure/memory (the node's, as for
// memory.available), fired by real memory stall: a child process reads a
// file a quarter larger than its memory cgroup's limit over and over, so
// the kernel keeps reclaiming and refaulting its page cache. Needs root, a
// kernel with PSI on and a memory cgroup (v1 or v2) to make the stall in.
func TestPressureTriggerFires(t *testing.T) {
	if fd, _, err := armPressureTrigger(procPressureMemory); err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
			cannotRun(t, "", "no PSI trigger here: %v", err)
		}
		t.Fatal(err)
	} else {
		unix.Close(fd)
	}
	cg := newTestCgroup(t, "")
	// The mechanism under test is the trigger's: a low level (2.5 % of
	// 2 s, which the kernel takes from any writer) fires within seconds of
	// the stall's start.
	saved := pressureTriggers
	pressureTriggers = []string{"some 50000 2000000"}
	t.Cleanup(func() { pressureTriggers = saved })
	n := newPressureNotifier(hard(sigMem, "500Mi"), "/unused", "", nil)
	elapsed := thrashUntilNotified(t, cg, n, "memory stall (PSI trigger some 50000 2000000 on /proc/pressure/memory)")
	t.Logf("notified %s after the thrasher started", elapsed.Round(time.Millisecond))
}

// thrashUntilNotified starts n, then a page-cache thrasher in cg (see
// startThrasher), and waits up to a minute for a notification containing
// want; it returns how long that took from the thrasher's start.
func thrashUntilNotified(t *testing.T, cg *testCgroup, n *pressureNotifier, want string) time.Duration {
	t.Helper()
	msgs, done, cancel := startArmed(t, n)
	start := startThrasher(t, cg)
	expectMessage(t, msgs, time.Minute, want)
	elapsed := time.Since(start)
	cancel()
	expectStopped(t, done)
	return elapsed
}

// thrashRoom is the page cache a thrasher's cgroup leaves it: less than the
// 60 MiB file it reads, so its pages are reclaimed and refaulted.
const thrashRoom = 40 << 20

// startThrasher starts a page-cache thrasher in cg and returns when it
// thrashes: the child (this test binary, whose own memory depends on the
// build: -race takes several times more) starts with no limit, and once it
// is ready the limit is set to what it charges besides page cache plus
// thrashRoom. A fixed limit could be below the child's own memory and get
// it OOM-killed before it read a page.
func startThrasher(t *testing.T, cg *testCgroup) time.Time {
	t.Helper()
	// Pages read twice are the cgroup's working set, and refaulting them
	// is a memory stall. The file's pages must not be in the page cache
	// already, charged to this process's cgroup: written, synced, dropped.
	file := thrashFile(t)
	startChild(t, cg.dir, "page-cache-thrash", pageCacheThrashEnv+"="+file).waitReady(t, time.Minute)
	cacheKey := "cache"
	if cg.v2 {
		cacheKey = "file"
	}
	own := cg.usage(t, cg.dir) - cgroupStat(t, cg.dir, cacheKey)
	cg.limit(t, own+thrashRoom)
	t.Logf("thrasher's own memory %d MiB, limit %d MiB", own>>20, (own+thrashRoom)>>20)
	return time.Now()
}

// thrashFile writes a 60 MiB file for the page-cache thrasher, on a disk:
// pages of tmpfs and ramfs are not reclaimable, and reading them again
// never stalls.
func thrashFile(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	if st.Type == unix.TMPFS_MAGIC || st.Type == unix.RAMFS_MAGIC {
		cannotRun(t, "", "%s is in memory (tmpfs or ramfs): set TMPDIR to a directory on a disk", dir)
	}
	file := filepath.Join(dir, "thrash")
	writeUncached(t, file, 60<<20)
	return file
}

// writeUncached writes n bytes to path, syncs them and drops them from the
// page cache. It checks that they are gone: pages left there stay charged
// to this process's cgroup, so a thrasher in another cgroup reads them
// without a charge, and never stalls (seen once in CI, on a machine busy
// writing back a cold build, as a silent minute without a notification).
func writeUncached(t *testing.T, path string, n int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(make([]byte, n)); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	// A page still being written back, or held for a moment, is not
	// dropped: try again for a while before giving up.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
			t.Fatal(err)
		}
		cached, pages := residentPages(t, f, n)
		if cached <= pages/10 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of the %d pages of %s stay in the page cache after FADV_DONTNEED", cached, pages, path)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// residentPages counts the pages of f's first n bytes in the page cache.
func residentPages(t *testing.T, f *os.File, n int) (cached, pages int) {
	t.Helper()
	m, err := unix.Mmap(int(f.Fd()), 0, n, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = unix.Munmap(m) }()
	vec := make([]byte, (n+os.Getpagesize()-1)/os.Getpagesize())
	// x/sys/unix has no mincore wrapper on linux.
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatalf("mincore: %v", errno)
	}
	for _, v := range vec {
		cached += int(v & 1)
	}
	return cached, len(vec)
}

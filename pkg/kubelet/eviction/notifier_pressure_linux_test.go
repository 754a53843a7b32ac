//evictkit:file EvictionCgroupV2Notifier
//go:build linux

package eviction

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/klog/v2/ktesting"
)

// pressureThrashEnv makes TestPressureThrashProcess act as the thrasher:
// its value is the file to read over and over.
const pressureThrashEnv = "EVICTKIT_PRESSURE_THRASH"

// TestPressureThrashProcess is not a test: it is the body of the child
// process TestPressureTriggerFires places in its memory cgroup. It waits
// for a line on stdin, says "ready", then reads the file named by
// pressureThrashEnv from start to end until stdin closes.
func TestPressureThrashProcess(t *testing.T) {
	path := os.Getenv(pressureThrashEnv)
	if path == "" {
		t.Skip("only runs as the child process of TestPressureTriggerFires")
	}
	in := bufio.NewReader(os.Stdin)
	if _, err := in.ReadString('\n'); err != nil {
		os.Exit(2)
	}
	done := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, in); close(done) }()
	os.Stdout.WriteString("ready\n")
	buf := make([]byte, 1<<20)
	for {
		select {
		case <-done:
			os.Exit(0)
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
	_, ctx := ktesting.NewTestContext(t)
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
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	armed := make(chan struct{})
	n.onArmed = func() { close(armed) }
	msgs, done := runPressureNotifier(ctx, n)
	select {
	case <-armed:
	case <-time.After(5 * time.Second):
		t.Fatal("not armed within 5 s")
	}
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
// file a little larger than its memory cgroup's limit over and over, so
// the kernel keeps reclaiming and refaulting its page cache. Needs root, a
// kernel with PSI on, and a cgroup v1 memory hierarchy to make the stall
// in (the hosts here).
func TestPressureTriggerFires(t *testing.T) {
	if fd, _, err := armPressureTrigger(procPressureMemory); err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
			t.Skipf("no PSI trigger here: %v", err)
		}
		t.Fatal(err)
	} else {
		unix.Close(fd)
	}
	dir := testMemcg(t)
	if err := os.WriteFile(filepath.Join(dir, "memory.limit_in_bytes"), []byte(strconv.Itoa(48<<20)), 0); err != nil {
		t.Fatalf("limiting the test cgroup: %v", err)
	}
	// A file a quarter larger than the limit: pages read twice are the
	// cgroup's working set, and refaulting them is a memory stall. Its
	// pages must not be in the page cache already, charged to this
	// process's cgroup: written, synced, dropped.
	file := filepath.Join(t.TempDir(), "thrash")
	writeUncached(t, file, 60<<20)
	// The mechanism under test is the trigger's: a low level (2.5 % of
	// 2 s, which the kernel takes from any writer) fires within seconds of
	// the stall's start.
	saved := pressureTriggers
	pressureTriggers = []string{"some 50000 2000000"}
	t.Cleanup(func() { pressureTriggers = saved })
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	n := newPressureNotifier(hard(sigMem, "500Mi"), "/unused", "", nil)
	armed := make(chan struct{})
	n.onArmed = func() { close(armed) }
	msgs, done := runPressureNotifier(ctx, n)
	<-armed
	<-startInMemcg(t, dir, "^TestPressureThrashProcess$", pressureThrashEnv+"="+file)
	expectMessage(t, msgs, time.Minute, "memory stall (PSI trigger some 50000 2000000 on /proc/pressure/memory)")
	cancel()
	expectStopped(t, done)
}

// writeUncached writes n bytes to path, syncs them and drops them from the
// page cache.
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
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		t.Fatal(err)
	}
}

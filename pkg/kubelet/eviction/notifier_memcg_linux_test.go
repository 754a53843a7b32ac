//evictkit:file notifier

package eviction

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opencontainers/cgroups"
	"golang.org/x/sys/unix"
	"k8s.io/klog/v2/ktesting"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// memcgHogMargin is how far above the cgroup's current usage the tests
// arm their notifiers; the memory hog (64 MiB) crosses it for sure.
const memcgHogMargin = 32 << 20

// testMemcg creates a memory cgroup v1 child of the hierarchy's root, owned
// by this test and removed at cleanup, and returns its directory.
func testMemcg(t *testing.T) string {
	t.Helper()
	return newTestCgroup(t, "v1").dir
}

// memcgUsage reads memory.usage_in_bytes of a cgroup.
func memcgUsage(t *testing.T, dir string) int64 {
	t.Helper()
	return readCgroupInt(t, filepath.Join(dir, "memory.usage_in_bytes"))
}

// startMemcgHog runs the memory hog inside the cgroup dir. It returns once
// the hog is in the cgroup and has been told to allocate; the returned
// channel is closed when the hog reports its memory touched.
func startMemcgHog(t *testing.T, dir string) <-chan struct{} {
	t.Helper()
	return startChild(t, dir, "memory-hog").ready
}

// openFdCount counts the descriptors open in this process.
func openFdCount(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// startNotifier runs n.Start in a goroutine; the returned channel is closed
// when it returns.
func startNotifier(ctx context.Context, n CgroupNotifier, events chan<- struct{}) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		n.Start(ctx, events)
	}()
	return done
}

// waitRunning waits until the notification loop of n owns its descriptors.
func waitRunning(t *testing.T, n *memcgNotifier) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		n.mu.Lock()
		running := n.running
		n.mu.Unlock()
		if running {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("Start did not begin its loop")
}

// waitClosed fails the test unless done is closed within a second, well
// under memcgPollTimeout, so that a wake-up that only came from the poll
// timeout would be caught.
func waitClosed(t *testing.T, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Fatalf("%s did not happen within a second", what)
	}
}

// waitConsumed waits until the eventfd has no pending count, i.e. until the
// notification loop has read it.
func waitConsumed(t *testing.T, fd int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		pending := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if ready, err := unix.Poll(pending, 0); err == nil && ready == 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the notification loop did not read the eventfd")
}

// assertReleased checks that the notifier closed its descriptors.
func assertReleased(t *testing.T, n *memcgNotifier) {
	t.Helper()
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.closed {
		t.Error("descriptors not released after Stop")
	}
}

func newTestMemcgNotifier(t *testing.T, dir string, level int64) *memcgNotifier {
	t.Helper()
	logger, _ := ktesting.NewTestContext(t)
	n, err := NewCgroupNotifier(logger, dir, "memory.usage_in_bytes", level)
	if err != nil {
		t.Fatalf("NewCgroupNotifier(%s): %v", dir, err)
	}
	mn, ok := n.(*memcgNotifier)
	if !ok {
		t.Fatalf("NewCgroupNotifier returned a %T on a cgroup v1 host", n)
	}
	t.Cleanup(mn.Stop)
	return mn
}

func TestMemcgNotifierFiresOnUsageCrossing(t *testing.T) {
	dir := testMemcg(t)
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)

	level := memcgUsage(t, dir) + memcgHogMargin
	n := newTestMemcgNotifier(t, dir, level)
	events := make(chan struct{})
	done := startNotifier(ctx, n, events)

	ready := startMemcgHog(t, dir)
	select {
	case <-events:
	case <-time.After(10 * time.Second):
		select {
		case <-ready:
			t.Fatalf("usage reached %d bytes but no notification for the level %d", memcgUsage(t, dir), level)
		default:
			t.Fatalf("no notification; the memory hog did not get ready either (usage %d)", memcgUsage(t, dir))
		}
	}
	// usage_in_bytes can fall back below the level right after the event
	// (per-CPU charge stock drained), so the oracle is the kernel's high
	// watermark: a notification is only right once usage has reached the level.
	if peak := readCgroupInt(t, filepath.Join(dir, "memory.max_usage_in_bytes")); peak < level {
		t.Errorf("notified while the cgroup's peak usage %d never reached the level %d", peak, level)
	}

	n.Stop()
	waitClosed(t, done, "return of Start after Stop")
}

func TestMemoryThresholdNotifierWithKernel(t *testing.T) {
	dir := testMemcg(t)
	mount, err := memoryControllerMount()
	if err != nil {
		t.Fatalf("memory controller mount: %v", err)
	}
	if filepath.Dir(dir) != filepath.Clean(mount) {
		cannotRun(t, "v1", "test cgroup %s is not under the controller mount %s", dir, mount)
	}
	logger, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)

	messages := make(chan string, 8)
	threshold := memoryThreshold(evictionapi.SignalAllocatableMemoryAvailable, 0, quantityValue("16Mi"))
	n, err := NewMemoryThresholdNotifier(logger, threshold, "/"+filepath.Base(dir), &CgroupNotifierFactory{}, func(m string) {
		select {
		case messages <- m:
		default:
		}
	})
	if err != nil {
		t.Fatalf("NewMemoryThresholdNotifier: %v", err)
	}
	go n.Start(ctx)

	// Stats of the pods cgroup making the armed level usage + margin:
	// no inactive file, capacity = usage + margin + threshold.
	usage := uint64(memcgUsage(t, dir))
	pods := memStats(memcgHogMargin+16<<20, usage, usage)
	if err := n.UpdateThreshold(ctx, summaryWith(memStats(1, 1, 1), pods)); err != nil {
		t.Fatalf("UpdateThreshold: %v", err)
	}
	startMemcgHog(t, dir)
	select {
	case m := <-messages:
		if !strings.Contains(m, n.Description()) {
			t.Errorf("handler message %q does not name %q", m, n.Description())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("handler not called; cgroup usage is %d", memcgUsage(t, dir))
	}
}

func TestMemcgNotifierStop(t *testing.T) {
	dir := testMemcg(t)
	_, ctx := ktesting.NewTestContext(t)
	const unreachable = 1 << 50

	t.Run("stop ends a running Start", func(t *testing.T) {
		n := newTestMemcgNotifier(t, dir, unreachable)
		done := startNotifier(ctx, n, make(chan struct{}))
		waitRunning(t, n)
		n.Stop()
		waitClosed(t, done, "return of Start after Stop")
		n.Stop()
		assertReleased(t, n)
	})

	t.Run("cancellation ends a running Start", func(t *testing.T) {
		n := newTestMemcgNotifier(t, dir, unreachable)
		cctx, cancel := context.WithCancel(ctx)
		done := startNotifier(cctx, n, make(chan struct{}))
		waitRunning(t, n)
		cancel()
		waitClosed(t, done, "return of Start after cancellation")
		n.Stop()
		n.Stop()
		assertReleased(t, n)
	})

	t.Run("start after stop returns at once", func(t *testing.T) {
		n := newTestMemcgNotifier(t, dir, unreachable)
		n.Stop()
		n.Stop()
		waitClosed(t, startNotifier(ctx, n, make(chan struct{})), "return of Start on a stopped notifier")
	})

	// A notification nobody receives must not keep Start blocked in its send.
	for _, how := range []string{"stop", "cancel"} {
		t.Run("unread event then "+how, func(t *testing.T) {
			n := newTestMemcgNotifier(t, dir, unreachable)
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			done := startNotifier(cctx, n, make(chan struct{}))
			waitRunning(t, n)
			// Signal the eventfd as the kernel would.
			var one [8]byte
			binary.NativeEndian.PutUint64(one[:], 1)
			if err := writeFull(n.eventFd, one[:]); err != nil {
				t.Fatal(err)
			}
			// Once the event is consumed, Start sits in the send.
			waitConsumed(t, n.eventFd)
			if how == "stop" {
				n.Stop()
			} else {
				cancel()
			}
			waitClosed(t, done, "return of Start blocked in a send after "+how)
		})
	}
}

func TestMemcgNotifierDeliversEventfdSignals(t *testing.T) {
	dir := testMemcg(t)
	_, ctx := ktesting.NewTestContext(t)
	n := newTestMemcgNotifier(t, dir, 1<<50)
	events := make(chan struct{})
	done := startNotifier(ctx, n, events)
	waitRunning(t, n)
	for i := 0; i < 3; i++ {
		var one [8]byte
		binary.NativeEndian.PutUint64(one[:], 1)
		if err := writeFull(n.eventFd, one[:]); err != nil {
			t.Fatal(err)
		}
		select {
		case <-events:
		case <-time.After(5 * time.Second):
			t.Fatalf("signal %d not delivered", i)
		}
	}
	n.Stop()
	waitClosed(t, done, "return of Start after Stop")
}

func TestNewCgroupNotifierErrors(t *testing.T) {
	if cgroups.IsCgroup2UnifiedMode() {
		cannotRun(t, "v1", "on cgroup v2 hosts NewCgroupNotifier returns a disabled notifier, never an error")
	}
	logger, _ := ktesting.NewTestContext(t)
	openFdCount(t) // let the runtime set up whatever it lazily needs first

	missing := filepath.Join(t.TempDir(), "no-such-cgroup")
	noControl := t.TempDir()
	if err := os.WriteFile(filepath.Join(noControl, "memory.usage_in_bytes"), []byte("0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		dir      func(t *testing.T) string
		attr     string
		wantPath func(dir string) string
	}{
		{
			name:     "missing cgroup",
			dir:      func(*testing.T) string { return missing },
			attr:     "memory.usage_in_bytes",
			wantPath: func(dir string) string { return filepath.Join(dir, "memory.usage_in_bytes") },
		},
		{
			name:     "missing event control",
			dir:      func(*testing.T) string { return noControl },
			attr:     "memory.usage_in_bytes",
			wantPath: func(dir string) string { return filepath.Join(dir, "cgroup.event_control") },
		},
		{
			// The kernel refuses thresholds on files without event support,
			// after the eventfds have been made.
			name: "attribute without events",
			dir: func(t *testing.T) string {
				return testMemcg(t)
			},
			attr:     "memory.stat",
			wantPath: func(dir string) string { return filepath.Join(dir, "cgroup.event_control") },
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.dir(t)
			before := openFdCount(t)
			n, err := NewCgroupNotifier(logger, dir, tc.attr, 1<<20)
			if err == nil {
				n.Stop()
				t.Fatal("NewCgroupNotifier succeeded, want an error")
			}
			if want := tc.wantPath(dir); !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not name %s", err, want)
			}
			if n != nil {
				t.Errorf("got a notifier %v along with the error", n)
			}
			if after := openFdCount(t); after != before {
				t.Errorf("%d descriptors open before, %d after: some leaked", before, after)
			}
		})
	}

	t.Run("factory names the path too", func(t *testing.T) {
		_, err := (&CgroupNotifierFactory{}).NewCgroupNotifier(logger, missing, "memory.usage_in_bytes", 1)
		if err == nil || !strings.Contains(err.Error(), missing) {
			t.Errorf("factory error %v does not name %s", err, missing)
		}
	})
}

func TestMemcgNotifierReleasesDescriptors(t *testing.T) {
	dir := testMemcg(t)
	logger, ctx := ktesting.NewTestContext(t)
	openFdCount(t)
	before := openFdCount(t)

	idle, err := NewCgroupNotifier(logger, dir, "memory.usage_in_bytes", 1<<50)
	if err != nil {
		t.Fatal(err)
	}
	if got := openFdCount(t); got != before+2 {
		t.Errorf("an armed notifier holds %d descriptors, want 2", got-before)
	}
	idle.Stop()
	if got := openFdCount(t); got != before {
		t.Errorf("%d descriptors left open after Stop without Start", got-before)
	}

	running, err := NewCgroupNotifier(logger, dir, "memory.usage_in_bytes", 1<<50)
	if err != nil {
		t.Fatal(err)
	}
	done := startNotifier(ctx, running, make(chan struct{}))
	waitRunning(t, running.(*memcgNotifier))
	running.Stop()
	waitClosed(t, done, "return of Start after Stop")
	if got := openFdCount(t); got != before {
		t.Errorf("%d descriptors left open after Stop of a running notifier", got-before)
	}
}

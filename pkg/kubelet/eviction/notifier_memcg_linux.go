//evictkit:file notifier
//go:build linux

package eviction

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/opencontainers/cgroups"
	"golang.org/x/sys/unix"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/kubelet/cm"
)

// memcgControlFile is the cgroup v1 file through which a process asks the
// kernel to signal an eventfd when a memory attribute crosses a level.
const memcgControlFile = "cgroup.event_control"

// memcgPollTimeout bounds a single wait of the notification loop. Stop and
// context cancellation wake the loop through a dedicated eventfd, so the
// timeout is only a safety net.
const memcgPollTimeout = notifierRefreshInterval

// memcgNotifier relays cgroup v1 memory threshold notifications.
//
// The kernel increments the counter of eventFd every time the watched
// attribute crosses the registered level, in either direction. wakeFd is a
// second eventfd, private to the notifier, written to by Stop and on context
// cancellation so that a Start blocked in poll returns immediately.
//
// The descriptors belong to the Start loop while it runs; Stop only closes
// them itself when no loop runs, otherwise the loop closes them on its way
// out. That way a descriptor is never closed (and its number possibly
// reused) while poll still watches it.
type memcgNotifier struct {
	eventFd int
	wakeFd  int
	// quit is closed by Stop; it unblocks a pending send on the event channel.
	quit chan struct{}

	mu      sync.Mutex
	stopped bool
	running bool
	closed  bool
}

var _ CgroupNotifier = &memcgNotifier{}

// NewCgroupNotifier registers with the kernel to be told whenever attribute
// (for instance memory.usage_in_bytes) of the cgroup v1 directory path
// crosses threshold, and returns a notifier relaying those notifications.
// On hosts running the unified cgroup v2 hierarchy, which has no such
// interface, it returns a notifier that never fires.
func NewCgroupNotifier(logger klog.Logger, path, attribute string, threshold int64) (CgroupNotifier, error) {
	if cgroups.IsCgroup2UnifiedMode() {
		logger.V(5).Info("Cgroup v2 has no memory threshold notifications, using a disabled notifier", "path", path, "attribute", attribute)
		return noopCgroupNotifier{}, nil
	}
	n, err := registerMemcgThreshold(path, attribute, threshold)
	if err != nil {
		// Not n: a nil *memcgNotifier would make a non-nil interface.
		return nil, err
	}
	return n, nil
}

// memoryControllerMount returns where the memory cgroup controller is mounted:
// its own hierarchy on cgroup v1, the unified hierarchy on cgroup v2.
func memoryControllerMount() (string, error) {
	subsystems, err := cm.GetCgroupSubsystems()
	if err != nil {
		return "", fmt.Errorf("listing cgroup mounts: %w", err)
	}
	if subsystems == nil || subsystems.MountPoints["memory"] == "" {
		return "", errors.New("memory cgroup mount point not found")
	}
	return subsystems.MountPoints["memory"], nil
}

// registerMemcgThreshold does the cgroup v1 registration. The watched file and
// the control file are only needed while registering; every descriptor it
// opens is closed again unless it ends up owned by the returned notifier.
func registerMemcgThreshold(dir, attribute string, threshold int64) (*memcgNotifier, error) {
	watchPath := filepath.Join(dir, attribute)
	controlPath := filepath.Join(dir, memcgControlFile)

	watchFd, err := openCgroupFile(watchPath, unix.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer unix.Close(watchFd)

	controlFd, err := openCgroupFile(controlPath, unix.O_WRONLY)
	if err != nil {
		return nil, err
	}
	defer unix.Close(controlFd)

	eventFd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("creating the eventfd for %s: %w", watchPath, err)
	}
	wakeFd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(eventFd)
		return nil, fmt.Errorf("creating the wake-up eventfd for %s: %w", watchPath, err)
	}

	// The control file takes "<event fd> <watched file fd> <level>".
	request := strconv.Itoa(eventFd) + " " + strconv.Itoa(watchFd) + " " + strconv.FormatInt(threshold, 10)
	if err := writeFull(controlFd, []byte(request)); err != nil {
		unix.Close(eventFd)
		unix.Close(wakeFd)
		return nil, fmt.Errorf("registering a threshold of %d on %s: %w", threshold, watchPath,
			&os.PathError{Op: "write", Path: controlPath, Err: err})
	}

	return &memcgNotifier{
		eventFd: eventFd,
		wakeFd:  wakeFd,
		quit:    make(chan struct{}),
	}, nil
}

// openCgroupFile opens a cgroup file, naming it in the error when that fails.
func openCgroupFile(path string, mode int) (int, error) {
	for {
		fd, err := unix.Open(path, mode|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return -1, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return fd, nil
	}
}

// writeFull writes b to fd in one piece, as cgroup control files require.
func writeFull(fd int, b []byte) error {
	for {
		n, err := unix.Write(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n != len(b) {
			return io.ErrShortWrite
		}
		return nil
	}
}

// readEventfd consumes the counter of a non-blocking eventfd. It returns
// false, without error, when the counter was zero.
func readEventfd(fd int) (bool, error) {
	var buf [8]byte
	for {
		n, err := unix.Read(fd, buf[:])
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return false, nil
		case err != nil:
			return false, err
		case n != len(buf):
			return false, fmt.Errorf("eventfd read returned %d bytes, want %d", n, len(buf))
		}
		return true, nil
	}
}

// Start sends a value on eventCh for every notification of the kernel, until
// Stop is called or ctx is done. Only one Start runs at a time; a second
// concurrent call, or a call after Stop, returns immediately.
func (n *memcgNotifier) Start(ctx context.Context, eventCh chan<- struct{}) {
	if !n.claim() {
		return
	}
	defer n.unclaim()
	cancelWake := context.AfterFunc(ctx, n.wake)
	defer cancelWake()

	logger := klog.FromContext(ctx)
	fds := []unix.PollFd{
		{Fd: int32(n.eventFd), Events: unix.POLLIN},
		{Fd: int32(n.wakeFd), Events: unix.POLLIN},
	}
	timeout := int(memcgPollTimeout / time.Millisecond)
	for ctx.Err() == nil && !n.isStopped() {
		fds[0].Revents, fds[1].Revents = 0, 0
		ready, err := unix.Poll(fds, timeout)
		if err == unix.EINTR || (err == nil && ready == 0) {
			continue
		}
		if err != nil {
			logger.Error(err, "Eviction manager: waiting for memory cgroup notifications failed")
			return
		}
		if fds[1].Revents != 0 {
			// Stop or cancellation: the loop condition decides. The
			// counter is reset so that a stale wake-up does not spin.
			if _, err := readEventfd(n.wakeFd); err != nil {
				logger.Error(err, "Eviction manager: resetting the notifier wake-up eventfd failed")
				return
			}
		}
		if fds[0].Revents == 0 {
			continue
		}
		if fds[0].Revents&unix.POLLNVAL != 0 {
			logger.Error(errors.New("invalid file descriptor"), "Eviction manager: memory cgroup eventfd is unusable")
			return
		}
		// POLLIN is the normal case. POLLERR and POLLHUP are not expected from
		// an eventfd; the read below then reports what went wrong.
		fired, err := readEventfd(n.eventFd)
		if err != nil {
			logger.Error(err, "Eviction manager: reading memory cgroup notification failed")
			return
		}
		if !fired {
			continue
		}
		select {
		case eventCh <- struct{}{}:
		case <-n.quit:
			return
		case <-ctx.Done():
			return
		}
	}
}

// Stop ends notification and releases the kernel registration. It may be
// called any number of times, before, during or after Start.
func (n *memcgNotifier) Stop() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.stopped {
		return
	}
	n.stopped = true
	close(n.quit)
	if n.running {
		// The running loop closes the descriptors when it sees the wake-up.
		n.signalWakeLocked()
		return
	}
	n.closeLocked()
}

// claim marks the notification loop as running; it fails when the notifier
// was stopped or another loop already runs.
func (n *memcgNotifier) claim() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.stopped || n.running {
		return false
	}
	n.running = true
	return true
}

// unclaim marks the loop as finished and, when Stop was called meanwhile,
// releases the descriptors it was using.
func (n *memcgNotifier) unclaim() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.running = false
	if n.stopped {
		n.closeLocked()
	}
}

func (n *memcgNotifier) isStopped() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.stopped
}

// wake interrupts a poll in progress.
func (n *memcgNotifier) wake() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.signalWakeLocked()
}

func (n *memcgNotifier) signalWakeLocked() {
	if n.closed {
		return
	}
	var one [8]byte
	binary.NativeEndian.PutUint64(one[:], 1)
	// EAGAIN would mean the counter is saturated, i.e. already signalled,
	// so the error is of no interest.
	_ = writeFull(n.wakeFd, one[:])
}

// closeLocked closes both eventfds once. Closing eventFd also drops the
// kernel's registration on the cgroup.
func (n *memcgNotifier) closeLocked() {
	if n.closed {
		return
	}
	n.closed = true
	unix.Close(n.eventFd)
	unix.Close(n.wakeFd)
}

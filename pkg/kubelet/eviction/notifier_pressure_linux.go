//evictkit:file EvictionCgroupV2Notifier
//go:build linux

package eviction

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// Memory notifications on cgroup v2 (feature gate EvictionCgroupV2Notifier,
// alpha).
//
// cgroup v2 has no memory usage thresholds (cgroup.event_control is v1's),
// so upstream's kubelet runs a disabled notifier there and looks at memory
// only every housekeeping interval. With the gate on, on the unified
// hierarchy, each watched cgroup (the node's, the pods') gets a notifier
// (startMemoryNotifiers) that wakes the eviction manager (a fast pass
// with EvictionFastPath, a monitoring pass otherwise) when
//
//   - the watched cgroup's memory stalls: a PSI trigger on its
//     memory.pressure (on /proc/pressure/memory for the root cgroup, the
//     node) for 10 % of stall over a window of 1 s (2 s where the kubelet
//     lacks CAP_SYS_RESOURCE: the kernel only takes windows of whole
//     multiples of 2 s from unprivileged writers), which the kernel
//     signals with POLLPRI;
//   - its memory.events changes (the kernel counts the times it hits
//     memory.high and memory.max, and OOM kills): an inotify watch. The
//     root cgroup has no memory.events, so the node's threshold has only
//     the trigger.
//
// A notification is a reason to look, not a decision: the pass decides on
// figures as always. Nothing is re-armed from stats: UpdateThreshold does
// nothing.
// pressureTriggers are the PSI triggers to try, in order: "some <stall>
// <window>" in microseconds. The kernel takes the line up to its last
// byte, which it overwrites with a NUL: each ends with one.
var pressureTriggers = []string{
	fmt.Sprintf("some %d %d", (100 * time.Millisecond).Microseconds(), time.Second.Microseconds()),
	fmt.Sprintf("some %d %d", (200 * time.Millisecond).Microseconds(), (2 * time.Second).Microseconds()),
}

// pressureNotifier is one memory threshold's cgroup v2 notifier.
type pressureNotifier struct {
	description string
	// pressureFile is where the PSI trigger is armed; eventsFile the
	// memory.events watched, "" for none.
	pressureFile, eventsFile string
	handler                  func(string)
	// onArmed, when set, is called once the sources are armed (tests).
	onArmed func()
}

var _ ThresholdNotifier = &pressureNotifier{}

// newPressureNotifier returns the cgroup v2 notifier of a memory threshold:
// on the pods' cgroup (podRoot, relative to the unified hierarchy mounted
// at mount) for allocatableMemory.available, on the node otherwise.
func newPressureNotifier(t evictionapi.Threshold, mount, podRoot string, handler func(string)) *pressureNotifier {
	n := &pressureNotifier{description: memoryNotifierDescription(t) + " (cgroup v2 pressure)", pressureFile: procPressureMemory, handler: handler}
	if isAllocatableEvictionThreshold(t) {
		dir := filepath.Join(mount, podRoot)
		n.pressureFile, n.eventsFile = filepath.Join(dir, "memory.pressure"), filepath.Join(dir, "memory.events")
	}
	return n
}

// Description names the threshold and the mechanism.
func (n *pressureNotifier) Description() string { return n.description }

// UpdateThreshold does nothing: neither a stall trigger nor memory.events
// depends on a usage level.
func (n *pressureNotifier) UpdateThreshold(context.Context, *statsapi.Summary) error { return nil }

// armPressureTrigger opens a pressure file and arms the first of
// pressureTriggers the kernel takes; it signals the returned descriptor
// with POLLPRI when the trigger fires.
func armPressureTrigger(path string) (int, string, error) {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, "", fmt.Errorf("opening %s: %w", path, err)
	}
	for _, trigger := range pressureTriggers {
		if _, err = unix.Write(fd, append([]byte(trigger), 0)); err == nil {
			return fd, trigger, nil
		}
		if !errors.Is(err, unix.EINVAL) {
			break
		}
	}
	unix.Close(fd)
	return -1, "", fmt.Errorf("arming a PSI trigger (%s) on %s: %w", strings.Join(pressureTriggers, " or "), path, err)
}

// watchFile returns an inotify descriptor watching path for writes.
func watchFile(path string) (int, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return -1, fmt.Errorf("inotify: %w", err)
	}
	if _, err := unix.InotifyAddWatch(fd, path, unix.IN_MODIFY); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("watching %s: %w", path, err)
	}
	return fd, nil
}

// Start arms the trigger and the watch and calls the handler for each
// notification until ctx is done. A source that cannot be armed is logged
// and left out; with neither, Start returns.
func (n *pressureNotifier) Start(ctx context.Context) {
	logger := klog.FromContext(ctx)
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		logger.Error(err, "Eviction manager: cgroup v2 memory notifier cannot start", "notifier", n.description)
		return
	}
	defer unix.Close(wake)
	stop := context.AfterFunc(ctx, func() { _, _ = unix.Write(wake, []byte{1, 0, 0, 0, 0, 0, 0, 0}) })
	defer stop()

	fds := []unix.PollFd{{Fd: int32(wake), Events: unix.POLLIN}}
	const psiTrigger, events = 1, 2
	kinds := []int{0}
	var trigger string
	if fd, armed, err := armPressureTrigger(n.pressureFile); err != nil {
		logger.Error(err, "Eviction manager: no PSI trigger for the memory notifier", "notifier", n.description)
	} else {
		trigger = armed
		defer unix.Close(fd)
		fds, kinds = append(fds, unix.PollFd{Fd: int32(fd), Events: unix.POLLPRI}), append(kinds, psiTrigger)
	}
	if n.eventsFile != "" {
		if fd, err := watchFile(n.eventsFile); err != nil {
			logger.Error(err, "Eviction manager: no memory.events watch for the memory notifier", "notifier", n.description)
		} else {
			defer unix.Close(fd)
			fds, kinds = append(fds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN}), append(kinds, events)
		}
	}
	if len(fds) == 1 {
		return
	}
	logger.Info("Eviction manager: cgroup v2 memory notifier armed", "notifier", n.description, "trigger", trigger, "pressureFile", n.pressureFile, "eventsFile", n.eventsFile)
	if n.onArmed != nil {
		n.onArmed()
	}
	buf := make([]byte, 4096)
	for ctx.Err() == nil {
		if _, err := unix.Poll(fds, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			logger.Error(err, "Eviction manager: cgroup v2 memory notifier stops", "notifier", n.description)
			return
		}
		var fired []string
		for i := range fds {
			re := fds[i].Revents
			if re == 0 || i == 0 {
				continue
			}
			if re&(unix.POLLERR|unix.POLLNVAL|unix.POLLHUP) != 0 {
				// The cgroup went away, or the kernel dropped the trigger.
				logger.Info("Eviction manager: cgroup v2 memory notifier source closed", "notifier", n.description, "revents", re)
				fds[i].Fd = -1
				continue
			}
			switch kinds[i] {
			case psiTrigger:
				fired = append(fired, "memory stall (PSI trigger "+trigger+" on "+n.pressureFile+")")
			case events:
				drainInotify(int(fds[i].Fd), buf)
				fired = append(fired, n.eventsFile+" changed")
			}
		}
		if ctx.Err() != nil {
			return
		}
		if len(fired) > 0 {
			n.handler(fmt.Sprintf("Eviction manager: %s notified: %s", n.description, strings.Join(fired, "; ")))
		}
	}
}

// drainInotify reads every pending event of a non-blocking inotify
// descriptor.
func drainInotify(fd int, buf []byte) {
	for {
		if _, err := unix.Read(fd, buf); err != nil {
			return
		}
	}
}

// newCgroupV2Notifier returns the cgroup v2 notifier of a memory threshold
// when the memory controller is on the unified hierarchy; false on cgroup
// v1, where the memcg threshold notifier works.
func newCgroupV2Notifier(t evictionapi.Threshold, podRoot string, handler func(string)) (ThresholdNotifier, bool) {
	mount, err := memoryControllerMount()
	if err != nil || !onUnifiedHierarchy(mount) {
		return nil, false
	}
	return newPressureNotifier(t, mount, podRoot, handler), true
}

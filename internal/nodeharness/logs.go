package nodeharness

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KubeletJournal returns the kubelet's journal lines (messages only) since
// a time.
func (f *Framework) KubeletJournal(ctx context.Context, since time.Time) ([]string, error) {
	out, err := f.Exec(ctx, "journalctl", "--no-pager", "-o", "cat", "-u", "kubelet", "--since", fmt.Sprintf("@%d", since.Unix()))
	if err != nil {
		return nil, err
	}
	var lines []string
	for line := range strings.Lines(out) {
		lines = append(lines, strings.TrimRight(line, "\n"))
	}
	return lines, nil
}

// LogLine is one line of a container's log with the runtime's timestamp.
type LogLine struct {
	Time time.Time
	Text string
}

// Texts is the lines' text without their timestamps.
func Texts(lines []LogLine) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l.Text
	}
	return out
}

// ContainerLog returns the log of a pod's first container, each line with
// the time the runtime received it.
func (f *Framework) ContainerLog(ctx context.Context, ns, pod string) ([]LogLine, error) {
	raw, err := f.Client.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Timestamps: true}).DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("log of pod %s/%s: %w", ns, pod, err)
	}
	return parseLogLines(string(raw))
}

// errLogUnavailable is what a log request returns when the kubelet could
// not read the container's log: its file is not there yet (the container
// is just being created) or not any more (an evicted pod's containers
// are removed as soon as they stop). The kubelet answers with its error
// message as the log's body, a line without a timestamp.
var errLogUnavailable = errors.New("the kubelet could not read the container's log")

// parseLogLines splits "<RFC 3339 time> <text>" lines.
func parseLogLines(raw string) ([]LogLine, error) {
	var out []LogLine
	for line := range strings.Lines(raw) {
		line = strings.TrimRight(line, "\n")
		if line == "" {
			continue
		}
		ts, text, _ := strings.Cut(line, " ")
		t, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil {
			return nil, fmt.Errorf("%w: %q", errLogUnavailable, line)
		}
		out = append(out, LogLine{Time: t, Text: text})
	}
	return out, nil
}

// containerEnded reports whether none of a pod's containers runs any more
// and none will: the pod is Succeeded or Failed and every container status
// says terminated. An evicted pod is Failed as soon as the kill starts,
// while its containers run out their grace period, and one evicted within
// a second of its start may still show its container waiting: the kubelet
// had not seen it run yet.
func containerEnded(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
		return false
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Terminated == nil {
			return false
		}
	}
	return true
}

// LogFollower collects a container's log lines while it runs. The kubelet
// removes an evicted pod's containers, and their logs with them, as soon
// as they have stopped, so a test that needs what a victim logged last
// follows the log from the start.
type LogFollower struct {
	mu    sync.Mutex
	lines []LogLine
	err   error
}

// FollowContainerLog starts following the log of a pod's first container,
// from its first line (retrying until the container has started), until
// the container ends or ctx is done. The stream comes from the kubelet: a
// kubelet restart ends it, and the follower then picks up where it was.
// Once the container has ended it reads once more, for what it logged
// last; an error is kept only if no line was ever read.
func (f *Framework) FollowContainerLog(ctx context.Context, ns, pod string) *LogFollower {
	l := &LogFollower{}
	go func() {
		var last time.Time
		final := false
		for ctx.Err() == nil {
			opts := &corev1.PodLogOptions{Follow: !final, Timestamps: true}
			if !last.IsZero() {
				since := metav1.NewTime(last)
				opts.SinceTime = &since
			}
			stream, err := f.Client.CoreV1().Pods(ns).GetLogs(pod, opts).Stream(ctx)
			if err == nil {
				last, err = l.read(stream, last)
				stream.Close()
			}
			// The stream ended, broke or could not start (the container is
			// not running yet, the kubelet restarted): go on while the
			// container may still log.
			p, perr := f.Client.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
			if final || perr != nil {
				if err != nil && last.IsZero() && ctx.Err() == nil {
					l.fail(fmt.Errorf("following the log of pod %s/%s: %w", ns, pod, err))
				}
				return
			}
			if containerEnded(p) {
				final = true
				continue
			}
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	return l
}

// read adds the lines of stream later than last and returns the time of
// the last line read.
func (l *LogFollower) read(stream io.Reader, last time.Time) (time.Time, error) {
	sc := bufio.NewScanner(stream)
	for sc.Scan() {
		lines, err := parseLogLines(sc.Text())
		if err != nil {
			return last, err
		}
		for _, line := range lines {
			if !line.Time.After(last) {
				continue // seen before the stream was re-opened
			}
			last = line.Time
			l.mu.Lock()
			l.lines = append(l.lines, line)
			l.mu.Unlock()
		}
	}
	return last, sc.Err()
}

func (l *LogFollower) fail(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.err = err
}

// Lines returns the lines collected so far, and the error that ended the
// following early, if any.
func (l *LogFollower) Lines() ([]LogLine, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.lines), l.err
}

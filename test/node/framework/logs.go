package framework

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
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

// ContainerLog returns the log of a pod's first container, each line with
// the time the runtime received it.
func (f *Framework) ContainerLog(ctx context.Context, ns, pod string) ([]LogLine, error) {
	raw, err := f.Client.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Timestamps: true}).DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("log of pod %s/%s: %w", ns, pod, err)
	}
	return parseLogLines(string(raw))
}

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
			return nil, fmt.Errorf("log line %q: no timestamp: %w", line, err)
		}
		out = append(out, LogLine{Time: t, Text: text})
	}
	return out, nil
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
// the container ends or ctx is done.
func (f *Framework) FollowContainerLog(ctx context.Context, ns, pod string) *LogFollower {
	l := &LogFollower{}
	go func() {
		var stream io.ReadCloser
		err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			var err error
			stream, err = f.Client.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Follow: true, Timestamps: true}).Stream(ctx)
			return err == nil, nil
		})
		if err != nil {
			l.fail(fmt.Errorf("following the log of pod %s/%s: %w", ns, pod, err))
			return
		}
		defer stream.Close()
		sc := bufio.NewScanner(stream)
		for sc.Scan() {
			lines, err := parseLogLines(sc.Text())
			if err != nil {
				l.fail(err)
				return
			}
			l.mu.Lock()
			l.lines = append(l.lines, lines...)
			l.mu.Unlock()
		}
		if err := sc.Err(); err != nil && ctx.Err() == nil {
			l.fail(fmt.Errorf("following the log of pod %s/%s: %w", ns, pod, err))
		}
	}()
	return l
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

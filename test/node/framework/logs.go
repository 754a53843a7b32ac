package framework

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
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

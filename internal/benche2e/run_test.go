package benche2e

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSigtermedNotEnded(t *testing.T) {
	const sigterm = "received terminated at 2026-12-07T12:19:23.65Z with 1100 MiB taken"
	hogs := []*corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "hog-a"}}, {ObjectMeta: metav1.ObjectMeta{Name: "hog-b"}}}
	for _, tc := range []struct {
		name  string
		lines map[string][]string
		ended []string
		want  []string
	}{
		{name: "no SIGTERM yet", lines: map[string][]string{"hog-a": {"holding 1100 MiB"}}},
		{name: "SIGTERM, still running", lines: map[string][]string{"hog-a": {"holding 1100 MiB", sigterm}}, want: []string{"hog-a"}},
		{name: "SIGTERM, ended", lines: map[string][]string{"hog-a": {sigterm}}, ended: []string{"hog-a"}},
		{name: "ended without SIGTERM", lines: map[string][]string{"hog-b": {"holding 10 MiB"}}, ended: []string{"hog-b"}},
		{name: "only the one still running", lines: map[string][]string{"hog-a": {sigterm}, "hog-b": {sigterm}}, ended: []string{"hog-a"}, want: []string{"hog-b"}},
		{name: "another signal is not a SIGTERM", lines: map[string][]string{"hog-a": {"received interrupt at 2026-12-07T12:19:23Z with 80 MiB taken"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := sigtermedNotEnded(hogs, tc.lines, tc.ended); !slices.Equal(got, tc.want) {
				t.Errorf("sigtermedNotEnded = %v, want %v", got, tc.want)
			}
		})
	}
}

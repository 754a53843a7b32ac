package nodee2e

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/evictkit/evictkit/internal/nodeharness"
)

// nodeSignal is a file in the node's /tmp that a waiting workload pod
// (`-after FILE`, `-resume FILE`, given path()) sees under /start, with
// signalMount: the spec creates it when the pod's moment comes (a node
// under pressure admits no new pod, so the pod is created before). It is
// removed when the spec ends.
type nodeSignal struct{ name string }

// signalMount mounts the node's /tmp at /start in a pod.
var signalMount = nodeharness.HostDir("start", "/tmp", "/start")

// newNodeSignal names a signal after base and the time, and removes its
// file when the spec ends.
func newNodeSignal(base string) nodeSignal {
	s := nodeSignal{name: "evictkit-" + base + "-" + time.Now().UTC().Format("20060102T150405")}
	DeferCleanup(func(ctx SpecContext) {
		_, err := f.Exec(ctx, "rm", "-f", "/tmp/"+s.name)
		Expect(err).NotTo(HaveOccurred())
	}, NodeTimeout(time.Minute))
	return s
}

// path is the file as a pod with signalMount sees it.
func (s nodeSignal) path() string { return "/start/" + s.name }

// give creates the file.
func (s nodeSignal) give(ctx context.Context) {
	_, err := f.Exec(ctx, "touch", "/tmp/"+s.name)
	Expect(err).NotTo(HaveOccurred())
}

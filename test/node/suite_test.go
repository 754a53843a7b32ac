package nodee2e

import (
	"context"
	"flag"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"

	"github.com/evictkit/evictkit/internal/nodeharness"
	"github.com/evictkit/evictkit/internal/nodeharness/suite"
)

// nodeSuite is the suite; a failed spec leaves the state of the node f points at.
var nodeSuite = suite.New("node-e2e", "node-e2e", "the kubelet the node must run: evictkit or upstream",
	func() []*nodeharness.Framework { return []*nodeharness.Framework{f} })

var (
	node string
	// imagefsNode is a node whose containerd has a filesystem of its own,
	// for the specs of a dedicated image filesystem.
	imagefsNode string
)

func init() {
	flag.StringVar(&node, "node", "evictkit-worker2", "the node under test")
	flag.StringVar(&imagefsNode, "imagefs-node", "evictkit-worker", "a node with a dedicated image filesystem (label evictkit.dev/imagefs-size), for the ImageFs specs")
	flag.BoolVar(&control, "control", false, "negative control: run the Alpha specs without their feature gates (on kubelet-upstream); each must fail as its expectControlFailure says (make test-node-controls)")
}

func TestNodeE2E(t *testing.T) { nodeSuite.Run(t, "evictkit node e2e") }

// f is the connection to the node under test, made once for the suite.
var f *nodeharness.Framework

var _ = BeforeSuite(func(ctx SpecContext) {
	f = nodeSuite.Connect(ctx, node)[0]
	admitTimeout = nodeSuite.PodStartBound()
	GinkgoWriter.Printf("node %s, kubelet %s, workload image %s\n", f.Node, f.Kubelet, f.Image)
}, NodeTimeout(15*time.Minute))

// others are connections to nodes other than the node under test, made
// when a spec first needs them.
var others = map[string]*nodeharness.Framework{}

// useNode points f at another node for the rest of the spec (its cleanup
// and failure dump included), connecting to it on first use.
func useNode(ctx context.Context, name string) {
	o, ok := others[name]
	if !ok {
		o = nodeSuite.ConnectTo(ctx, name)
		others[name] = o
	}
	under := f
	f = o
	DeferCleanup(func() { f = under })
}

package nodee2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/evictkit/evictkit/test/node/framework"
)

var cfg framework.Config

// imagefsNode is a node whose containerd has a filesystem of its own, for
// the specs of a dedicated image filesystem.
var imagefsNode string

func init() {
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	flag.StringVar(&cfg.Root, "root", root, "the evictkit checkout")
	flag.StringVar(&cfg.Cluster, "cluster", "evictkit", "the kind cluster's name")
	flag.StringVar(&cfg.Node, "node", "evictkit-worker2", "the node under test")
	flag.StringVar(&cfg.Kubeconfig, "kubeconfig", "", "the cluster's kubeconfig (default ROOT/_output/kubeconfig)")
	flag.StringVar(&cfg.Kubelet, "kubelet", framework.KubeletEvictkit, "the kubelet the node must run: evictkit or upstream")
	flag.StringVar(&imagefsNode, "imagefs-node", "evictkit-worker", "a node with a dedicated image filesystem (label evictkit.dev/imagefs-size), for the ImageFs specs")
	flag.StringVar(&cfg.LogDir, "logs", "", "where failed specs leave diagnostics (default ROOT/_output/logs/node-e2e)")
	flag.BoolVar(&control, "control", false, "negative control: run the Alpha specs without their feature gates (on kubelet-upstream); each must fail as its expectControlFailure says (make test-node-controls)")
}

func TestNodeE2E(t *testing.T) {
	if cfg.Kubeconfig == "" {
		cfg.Kubeconfig = filepath.Join(cfg.Root, "_output", "kubeconfig")
	}
	if cfg.LogDir == "" {
		cfg.LogDir = filepath.Join(cfg.Root, "_output", "logs", "node-e2e")
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "evictkit node e2e")
}

// f is the connection to the node under test, made once for the suite.
var f *framework.Framework

var _ = BeforeSuite(func(ctx SpecContext) {
	// Diagnostics are of this run's failures only.
	Expect(os.RemoveAll(cfg.LogDir)).To(Succeed())
	var err error
	f, err = framework.New(ctx, cfg)
	Expect(err).NotTo(HaveOccurred())
	removed, err := f.RemoveLeftovers(ctx)
	Expect(err).NotTo(HaveOccurred())
	if len(removed) > 0 {
		GinkgoWriter.Printf("removed what an interrupted run left: %v\n", removed)
	}
	Expect(f.EnsurePriorityClasses(ctx)).To(Succeed())
	GinkgoWriter.Printf("node %s, kubelet %s, workload image %s\n", f.Node, f.Kubelet, f.Image)
}, NodeTimeout(10*time.Minute))

// others are connections to nodes other than the node under test, made
// when a spec first needs them.
var others = map[string]*framework.Framework{}

// useNode points f at another node for the rest of the spec (its cleanup
// and failure dump included), connecting to it on first use the way the
// suite connects to the node under test.
func useNode(ctx context.Context, name string) {
	o, ok := others[name]
	if !ok {
		c := cfg
		c.Node = name
		var err error
		o, err = framework.New(ctx, c)
		Expect(err).NotTo(HaveOccurred())
		others[name] = o
	}
	under := f
	f = o
	DeferCleanup(func() { f = under })
}

// current is what the running spec works on, for the failure dump.
var current struct {
	namespace string
	started   time.Time
}

var _ = BeforeEach(func() {
	current.namespace = ""
	current.started = time.Now()
})

// On failure, leave the node's conditions, the kubelet's log, the pods and
// their events in LOGS/<spec>/ before the spec's cleanup removes them.
var _ = JustAfterEach(func(ctx SpecContext) {
	if !CurrentSpecReport().Failed() || f == nil {
		return
	}
	dir := framework.DumpDir(cfg.LogDir, CurrentSpecReport().FullText())
	if err := f.Dump(ctx, dir, current.namespace, current.started.Add(-time.Minute)); err != nil {
		GinkgoWriter.Printf("dump: %v\n", err)
	}
	fmt.Fprintf(os.Stderr, "node e2e: diagnostics of the failed spec in %s\n", dir)
}, NodeTimeout(2*time.Minute))

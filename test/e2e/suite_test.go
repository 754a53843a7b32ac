package clustere2e

import (
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

// cfg is the cluster; its Node field is set per worker.
var cfg framework.Config

// The two workers: pressure is made on one, the other has to take what the
// scheduler can no longer place there.
var pressuredName, spareName string

func init() {
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	flag.StringVar(&cfg.Root, "root", root, "the evictkit checkout")
	flag.StringVar(&cfg.Cluster, "cluster", "evictkit", "the kind cluster's name")
	flag.StringVar(&cfg.Kubeconfig, "kubeconfig", "", "the cluster's kubeconfig (default ROOT/_output/kubeconfig)")
	flag.StringVar(&cfg.Kubelet, "kubelet", framework.KubeletEvictkit, "the kubelet both workers must run: evictkit or upstream")
	flag.StringVar(&pressuredName, "pressure-node", "evictkit-worker2", "the worker the specs put under pressure")
	flag.StringVar(&spareName, "spare-node", "evictkit-worker", "the other worker, which must take the pods the pressured one cannot")
	flag.StringVar(&cfg.LogDir, "logs", "", "where failed specs leave diagnostics (default ROOT/_output/logs/e2e)")
}

func TestClusterE2E(t *testing.T) {
	if cfg.Kubeconfig == "" {
		cfg.Kubeconfig = filepath.Join(cfg.Root, "_output", "kubeconfig")
	}
	if cfg.LogDir == "" {
		cfg.LogDir = filepath.Join(cfg.Root, "_output", "logs", "e2e")
	}
	cfg.Suite = "e2e"
	RegisterFailHandler(Fail)
	RunSpecs(t, "evictkit cluster e2e")
}

// pressured and spare are connections to the two workers, made once.
var pressured, spare *framework.Framework

var _ = BeforeSuite(func(ctx SpecContext) {
	Expect(pressuredName).NotTo(Equal(spareName), "-pressure-node and -spare-node must be two different workers")
	Expect(os.RemoveAll(cfg.LogDir)).To(Succeed())
	for _, w := range []struct {
		f    **framework.Framework
		name string
	}{{&pressured, pressuredName}, {&spare, spareName}} {
		c := cfg
		c.Node = w.name
		var err error
		*w.f, err = framework.New(ctx, c)
		Expect(err).NotTo(HaveOccurred())
	}
	removed, err := pressured.RemoveLeftovers(ctx)
	Expect(err).NotTo(HaveOccurred())
	if len(removed) > 0 {
		GinkgoWriter.Printf("removed what an interrupted run left: %v\n", removed)
	}
	Expect(pressured.EnsurePriorityClasses(ctx)).To(Succeed())
	GinkgoWriter.Printf("pressure on %s, spare %s, kubelet %s, workload image %s\n", pressured.Node, spare.Node, cfg.Kubelet, pressured.Image)
}, NodeTimeout(10*time.Minute))

// current is what the running spec works on, for the failure dump.
var current struct {
	namespace string
	started   time.Time
}

var _ = BeforeEach(func() {
	current.namespace = ""
	current.started = time.Now()
})

// On failure, leave both workers' conditions, kubelet logs, the spec's pods
// and their events in LOGS/<spec>/<node>/ before the spec's cleanup removes
// them.
var _ = JustAfterEach(func(ctx SpecContext) {
	if !CurrentSpecReport().Failed() {
		return
	}
	dir := framework.DumpDir(cfg.LogDir, CurrentSpecReport().FullText())
	for _, w := range []*framework.Framework{pressured, spare} {
		if w == nil {
			continue
		}
		if err := w.Dump(ctx, filepath.Join(dir, w.Node), current.namespace, current.started.Add(-time.Minute)); err != nil {
			GinkgoWriter.Printf("dump of %s: %v\n", w.Node, err)
		}
	}
	fmt.Fprintf(os.Stderr, "cluster e2e: diagnostics of the failed spec in %s\n", dir)
}, NodeTimeout(2*time.Minute))

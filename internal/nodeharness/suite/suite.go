// Package suite is the Ginkgo side of the e2e suites (test/node,
// test/e2e): the flags every suite takes, connecting to its nodes, the
// spec's namespace, the kubelet configuration a spec sets and puts back,
// and the diagnostics a failed spec leaves. It is apart from
// internal/nodeharness so that the bench links no Ginkgo.
package suite

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

	"github.com/evictkit/evictkit/internal/nodeharness"
)

// Bounds of the waits both suites make (generous: a wait ends as soon as
// its condition holds).
const (
	Poll            = 2 * time.Second
	PressureTimeout = 5 * time.Minute // until a pressure condition appears
	ClearTimeout    = 5 * time.Minute // until it clears
	// TransitionPeriod is evictionPressureTransitionPeriod in every spec.
	TransitionPeriod = 30 * time.Second
	// MonitoringInterval is the kubelet's housekeeping period: the last
	// time it saw a threshold met can be up to this long before the
	// pressure actually ended.
	MonitoringInterval = 10 * time.Second
	// warmUpTimeout bounds the first node's warm-up pod (WarmUp).
	warmUpTimeout = 8 * time.Minute
)

// Suite is one e2e suite: its configuration, filled from flags, and what
// the running spec works on, for the failure dump.
type Suite struct {
	Config nodeharness.Config
	// logs is the default directory of diagnostics under _output/logs.
	logs string
	// dumped are the nodes whose state a failed spec leaves.
	dumped func() []*nodeharness.Framework

	namespace string
	started   time.Time
	// warmUp is how long the first node's warm-up pod took to start.
	warmUp time.Duration
}

// New registers the flags every suite takes on the default flag set
// (-root, -cluster, -kubeconfig, -kubelet, -logs) and the Ginkgo nodes
// that track the running spec and, when it fails, leave the state of the
// nodes dumped returns in LOGS/<spec>/ (one node) or LOGS/<spec>/<node>/
// (several) before the spec's cleanup removes it. Call it once, from a
// package variable of the suite.
func New(name, logs, kubeletHelp string, dumped func() []*nodeharness.Framework) *Suite {
	s := &Suite{logs: logs, dumped: dumped}
	s.Config.Suite = name
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	flag.StringVar(&s.Config.Root, "root", root, "the evictkit checkout")
	flag.StringVar(&s.Config.Cluster, "cluster", "evictkit", "the kind cluster's name")
	flag.StringVar(&s.Config.Kubeconfig, "kubeconfig", "", "the cluster's kubeconfig (default ROOT/_output/kubeconfig)")
	flag.StringVar(&s.Config.Kubelet, "kubelet", nodeharness.KubeletEvictkit, kubeletHelp)
	flag.StringVar(&s.Config.LogDir, "logs", "", "where failed specs leave diagnostics (default ROOT/_output/logs/"+logs+")")

	BeforeEach(func() {
		s.namespace = ""
		s.started = time.Now()
	})
	JustAfterEach(s.dumpIfFailed, NodeTimeout(2*time.Minute))
	return s
}

// Run fills in the defaults the flags left and runs the suite's specs.
func (s *Suite) Run(t *testing.T, description string) {
	if s.Config.Kubeconfig == "" {
		s.Config.Kubeconfig = filepath.Join(s.Config.Root, "_output", "kubeconfig")
	}
	if s.Config.LogDir == "" {
		s.Config.LogDir = filepath.Join(s.Config.Root, "_output", "logs", s.logs)
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, description)
}

// Connect makes the suite's connections, once, from BeforeSuite: it
// removes the diagnostics of an earlier run, connects to each node, and
// on the first one removes what an interrupted run left, makes sure the
// test priority classes exist, and runs a warm-up pod.
func (s *Suite) Connect(ctx context.Context, nodes ...string) []*nodeharness.Framework {
	Expect(nodes).NotTo(BeEmpty(), "no node to connect to")
	Expect(os.RemoveAll(s.Config.LogDir)).To(Succeed())
	out := make([]*nodeharness.Framework, len(nodes))
	for i, n := range nodes {
		out[i] = s.ConnectTo(ctx, n)
	}
	removed, err := out[0].RemoveLeftovers(ctx)
	Expect(err).NotTo(HaveOccurred())
	if len(removed) > 0 {
		GinkgoWriter.Printf("removed what an interrupted run left: %v\n", removed)
	}
	Expect(out[0].EnsurePriorityClasses(ctx)).To(Succeed())
	took, err := out[0].WarmUp(ctx, warmUpTimeout)
	Expect(err).NotTo(HaveOccurred())
	s.warmUp = took
	GinkgoWriter.Printf("node %s ran its warm-up pod in %s; pods get %s to start\n", out[0].Node, took.Round(time.Second), s.PodStartBound())
	return out
}

// PodStartBound bounds a spec's wait for a new pod to start (or to be
// turned away): 2 min, or four times the warm-up pod's start on a node
// slower than that allows for (the cgroup v2 VM under TCG takes 50-100 s
// to start a pod). It bounds set-up waits only, never what a spec
// asserts about evictions.
func (s *Suite) PodStartBound() time.Duration {
	return max(2*time.Minute, 4*s.warmUp)
}

// ConnectTo connects to one node of the suite's cluster.
func (s *Suite) ConnectTo(ctx context.Context, node string) *nodeharness.Framework {
	c := s.Config
	c.Node = node
	f, err := nodeharness.New(ctx, c)
	Expect(err).NotTo(HaveOccurred())
	return f
}

// CreateNamespace makes the spec's namespace on f's cluster, removed when
// the spec ends; the failure dump lists its pods and events.
func (s *Suite) CreateNamespace(ctx context.Context, f *nodeharness.Framework, base string) string {
	ns, err := f.CreateNamespace(ctx, base)
	Expect(err).NotTo(HaveOccurred())
	s.namespace = ns
	DeferCleanup(func(ctx SpecContext) {
		Expect(f.DeleteNamespace(ctx, ns)).To(Succeed())
	}, NodeTimeout(5*time.Minute))
	return ns
}

func (s *Suite) dumpIfFailed(ctx SpecContext) {
	if !CurrentSpecReport().Failed() {
		return
	}
	var nodes []*nodeharness.Framework
	for _, f := range s.dumped() {
		if f != nil {
			nodes = append(nodes, f)
		}
	}
	if len(nodes) == 0 {
		return
	}
	dir := nodeharness.DumpDir(s.Config.LogDir, CurrentSpecReport().FullText())
	for _, f := range nodes {
		into := dir
		if len(nodes) > 1 {
			into = filepath.Join(dir, f.Node)
		}
		if err := f.Dump(ctx, into, s.namespace, s.started.Add(-time.Minute)); err != nil {
			GinkgoWriter.Printf("dump of %s: %v\n", f.Node, err)
		}
	}
	fmt.Fprintf(os.Stderr, "%s: diagnostics of the failed spec in %s\n", s.Config.Suite, dir)
}

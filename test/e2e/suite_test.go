package clustere2e

import (
	"flag"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/evictkit/evictkit/internal/nodeharness"
	"github.com/evictkit/evictkit/internal/nodeharness/suite"
)

// clusterSuite is the suite; a failed spec leaves the state of both
// workers.
var clusterSuite = suite.New("e2e", "e2e", "the kubelet both workers must run: evictkit or upstream",
	func() []*nodeharness.Framework { return []*nodeharness.Framework{pressured, spare} })

// The two workers: pressure is made on one, the other has to take what the
// scheduler can no longer place there.
var pressuredName, spareName string

func init() {
	flag.StringVar(&pressuredName, "pressure-node", "evictkit-worker2", "the worker the specs put under pressure")
	flag.StringVar(&spareName, "spare-node", "evictkit-worker", "the other worker, which must take the pods the pressured one cannot")
}

func TestClusterE2E(t *testing.T) { clusterSuite.Run(t, "evictkit cluster e2e") }

// pressured and spare are connections to the two workers, made once.
var pressured, spare *nodeharness.Framework

var _ = BeforeSuite(func(ctx SpecContext) {
	Expect(pressuredName).NotTo(Equal(spareName), "-pressure-node and -spare-node must be two different workers")
	w := clusterSuite.Connect(ctx, pressuredName, spareName)
	pressured, spare = w[0], w[1]
	GinkgoWriter.Printf("pressure on %s, spare %s, kubelet %s, workload image %s\n", pressured.Node, spare.Node, pressured.Kubelet, pressured.Image)
}, NodeTimeout(15*time.Minute))

package suite

import (
	"context"
	"fmt"
	"maps"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"

	"github.com/evictkit/evictkit/internal/nodeharness"
)

// SetKubeletConfig changes f's kubelet configuration for the running spec
// and puts the original back when the spec ends: the spec's
// evictionPressureTransitionPeriod (TransitionPeriod), what set changes,
// and gates turned on or off over the configured feature gates, which
// /configz must then show in effect. The restore is registered first, so
// a kubelet that does not come back with the new configuration gets the
// original back too.
func SetKubeletConfig(ctx context.Context, f *nodeharness.Framework, gates map[string]bool, set func(*kubeletconfig.KubeletConfiguration)) {
	DeferCleanup(func(ctx SpecContext) {
		Expect(f.RestoreKubeletConfig(ctx)).To(Succeed())
	}, NodeTimeout(5*time.Minute))
	Expect(f.UpdateKubeletConfig(ctx, func(c *kubeletconfig.KubeletConfiguration) {
		c.EvictionPressureTransitionPeriod = metav1.Duration{Duration: TransitionPeriod}
		set(c)
		if len(gates) > 0 {
			c.FeatureGates = maps.Clone(c.FeatureGates)
			if c.FeatureGates == nil {
				c.FeatureGates = map[string]bool{}
			}
			maps.Copy(c.FeatureGates, gates)
		}
		GinkgoWriter.Printf("%s: evictionHard %v evictionSoft %v featureGates %v\n", f.Node, c.EvictionHard, c.EvictionSoft, c.FeatureGates)
	})).To(Succeed())
	if len(gates) > 0 {
		By(fmt.Sprintf("checking the kubelet runs with %v (/configz)", gates))
		Expect(f.GatesInEffect(ctx, gates)).To(Succeed())
	}
}

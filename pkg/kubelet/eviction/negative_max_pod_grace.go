//evictkit:file EvictionNegativeMaxPodGraceDefers

package eviction

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/component-base/featuregate"
)

// evictionNegativeMaxPodGraceDefers: a negative evictionMaxPodGracePeriod
// gives soft evictions the pod's own grace period, as the setting's
// documentation says, instead of a negative one (an immediate kill).
const evictionNegativeMaxPodGraceDefers featuregate.Feature = "EvictionNegativeMaxPodGraceDefers"

var _ = addAlphaFeature(alphaFeature{gate: evictionNegativeMaxPodGraceDefers})

// deferToPodGrace reports whether a soft eviction gives the pod its own
// grace period: with the gate on and a negative maximum (the kubelet's
// flag has promised "if negative, defer to pod specified value" since it
// was added; upstream passes the negative value on, and the runtime kills
// at once).
func deferToPodGrace(gates featureGates, maxPodGrace int64) bool {
	return gates.alpha[evictionNegativeMaxPodGraceDefers] && maxPodGrace < 0
}

// podOwnGracePeriod is the pod's terminationGracePeriodSeconds, or the
// API's default when it has none (the API server sets it on every pod it
// stores; static pods may lack it).
func podOwnGracePeriod(pod *v1.Pod) int64 {
	if p := pod.Spec.TerminationGracePeriodSeconds; p != nil {
		return *p
	}
	return v1.DefaultTerminationGracePeriodSeconds
}

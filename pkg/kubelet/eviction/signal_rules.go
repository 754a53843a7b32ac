package eviction

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// signalRule is how the thresholds of a family of signals are read, met,
// acted on and reported. Every row of signalTable names its family's rule,
// so that a new family of signals is a rule and its rows, not branches in
// parsing, evaluation, sizing and messages.
type signalRule struct {
	// family names the signals in error messages ("a pressure stall
	// signal").
	family string
	// gated, when set, says why the family's signals cannot be used (the
	// feature gate they need is off), or nil.
	gated func() error
	// operator is the operator of the family's thresholds, and symbol
	// renders it in logs.
	operator evictionapi.ThresholdOperator
	symbol   string
	// met reports whether an observation meets a threshold of the family
	// (with reclaim set, counting its minimum reclaim).
	met func(t evictionapi.Threshold, ob observation, reclaim bool) bool
	// parseValue parses a threshold's value; use false leaves the
	// threshold out.
	parseValue func(s string) (v evictionapi.ThresholdValue, use bool, err error)
	// minReclaim: the family's thresholds take a minimum reclaim.
	minReclaim bool
	// sized: the victims can be sized to the shortfall
	// (EvictionReclaimSized); otherwise one pod per pass.
	sized bool
	// settling, when set, holds an actionable threshold back for a while
	// after a pass evicted for the family: it is given the time since,
	// the signal's observation at the previous pass (nil without one) and
	// now.
	settling func(since time.Duration, last *observation, ob observation) bool
	// values renders a threshold's level and an observation for
	// explanations.
	values func(t evictionapi.Threshold, ob observation, r v1.ResourceName) (observed, threshold string)
	// nodeMessage is the node part of an evicted pod's message.
	nodeMessage func(r v1.ResourceName, t *evictionapi.Threshold, ob *observation) string
}

// availableRule is the rule of upstream's signals: an amount left (bytes,
// inodes, PIDs) that meets a threshold below a quantity or a percentage of
// capacity.
var availableRule = &signalRule{
	operator:    evictionapi.OpLessThan,
	symbol:      "<",
	met:         below,
	parseValue:  parseThresholdValue,
	minReclaim:  true,
	sized:       true,
	values:      availableValues,
	nodeMessage: lowOnResourceMessage,
}

// ruleOf returns the rule of a signal; an unknown signal has upstream's.
func ruleOf(signal evictionapi.Signal) *signalRule {
	if id, ok := lookupSignal(signal); ok {
		return signalTable[id].rule
	}
	return availableRule
}

// below reports whether an amount left is below a threshold's level
// (with reclaim set, plus its minimum reclaim).
func below(t evictionapi.Threshold, ob observation, reclaim bool) bool {
	return thresholdLevel(t, ob.capacity, reclaim).CmpInt64(ob.available) > 0
}

// quantityFormat is how figures of a resource are printed.
func quantityFormat(r v1.ResourceName) resource.Format {
	if r == resourceInodes || r == resourcePids {
		return resource.DecimalSI
	}
	return resource.BinarySI
}

// availableValues renders an amount left and the threshold's level.
func availableValues(t evictionapi.Threshold, ob observation, r v1.ResourceName) (string, string) {
	return resource.NewQuantity(ob.available, quantityFormat(r)).String(), thresholdLevel(t, ob.capacity, false).String()
}

// lowOnResourceMessage is upstream's node part of an eviction message:
// what the node was short of, and the threshold and observation when
// known.
func lowOnResourceMessage(r v1.ResourceName, t *evictionapi.Threshold, ob *observation) string {
	msg := fmt.Sprintf("The node was low on resource: %v. ", r)
	if t != nil && ob != nil {
		level := thresholdLevel(*t, ob.capacity, false)
		msg += fmt.Sprintf("Threshold quantity: %v, available: %v. ", level, resource.NewQuantity(ob.available, quantityFormat(r)))
	}
	return msg
}

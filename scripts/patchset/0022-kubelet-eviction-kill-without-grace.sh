#!/usr/bin/env bash
# Patch 0022: the EvictionKillWithoutGrace feature gate (alpha, off by
# default): the eviction package asks for a grace period of 0 on hard
# evictions, the pod worker keeps an eviction's 0 instead of raising it to
# 1 s, and the runtime manager passes it on instead of raising it to 2 s.
# Runs inside the kubernetes tree; EVICTKIT is the evictkit checkout.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/package.sh"

add_feature_gate EvictionKillWithoutGrace Alpha false "owner: (the GitHub handle of whoever proposes it upstream)
kep: none yet; alpha only, a KEP is needed before beta

A hard eviction kills its pod's containers at once (the runtime is asked
to stop them with a timeout of 0: SIGKILL), as does any eviction that
asks for a grace period of 0, instead of after the pod worker's 1 s and
the runtime manager's 2 s minimum grace periods."
copy_package EvictionKillWithoutGrace

# The pod worker: an eviction that asks for 0 marks the pod's sync status,
# and every terminating sync of the pod then passes 0 on. The grace period
# the status keeps stays at least 1 s, so the rule that it only decreases
# is untouched.
replace_once pkg/kubelet/pod_workers.go '	// gracePeriod is the requested gracePeriod once terminatingAt is nonzero.
	gracePeriod int64' '	// gracePeriod is the requested gracePeriod once terminatingAt is nonzero.
	gracePeriod int64
	// killWithoutGrace is set once an eviction asked for a grace period of 0
	// with EvictionKillWithoutGrace on; each terminating sync then passes 0 on.
	killWithoutGrace bool'
replace_once pkg/kubelet/pod_workers.go '		gracePeriod, gracePeriodShortened := calculateEffectiveGracePeriod(status, pod, options.KillPodOptions)
' '		if evictionAsksNoGrace(options.KillPodOptions) {
			status.killWithoutGrace = true
		}
		gracePeriod, gracePeriodShortened := calculateEffectiveGracePeriod(status, pod, options.KillPodOptions)
'
replace_once pkg/kubelet/pod_workers.go '		// always set the grace period for syncTerminatingPod so we don'"'"'t have to recalculate,
		// will never be zero.
		options.KillPodOptions.PodTerminationGracePeriodSecondsOverride = &gracePeriod
' '		// always set the grace period for syncTerminatingPod so we don'"'"'t have to recalculate,
		// will never be zero unless an eviction asked for no grace period.
		options.KillPodOptions.PodTerminationGracePeriodSecondsOverride = &gracePeriod
		if status.killWithoutGrace {
			noGrace := int64(0)
			options.KillPodOptions.PodTerminationGracePeriodSecondsOverride = &noGrace
		}
'

# The runtime manager: a grace period override of 0 is passed on when the
# gate is on. Only the pod worker's eviction path above passes 0: its
# other kills get at least 1 s from the pod worker.
replace_once pkg/kubelet/kuberuntime/kuberuntime_container.go '	// always give containers a minimal shutdown window to avoid unnecessary SIGKILLs
	if gracePeriod < minimumGracePeriodInSeconds {' '	// always give containers a minimal shutdown window to avoid unnecessary SIGKILLs,
	// unless the kill asked for none (an eviction, with EvictionKillWithoutGrace)
	if gracePeriod < minimumGracePeriodInSeconds && !killWithoutGrace(gracePeriodOverride) {'
replace_once pkg/kubelet/kuberuntime/kuberuntime_container.go '// killContainer kills a container through the following steps:' '// killWithoutGrace reports whether a kill asked for a grace period of 0 while
// EvictionKillWithoutGrace is on: the runtime then stops the container at once.
func killWithoutGrace(gracePeriodOverride *int64) bool {
	return utilfeature.DefaultFeatureGate.Enabled(features.EvictionKillWithoutGrace) &&
		gracePeriodOverride != nil && *gracePeriodOverride == 0
}

// killContainer kills a container through the following steps:'
# evictionAsksNoGrace is a file of its own: pod_workers.go does not import
# the feature gates on every base.
copy_tree_files pkg/kubelet/pod_workers_kill_without_grace.go pkg/kubelet/pod_workers_kill_without_grace_test.go \
	pkg/kubelet/kuberuntime/kill_without_grace_test.go

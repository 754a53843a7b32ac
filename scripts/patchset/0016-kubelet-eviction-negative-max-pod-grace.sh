#!/usr/bin/env bash
# Patch 0016: the EvictionNegativeMaxPodGraceDefers feature gate (alpha,
# off by default) and the eviction package's code for it. Runs inside the
# kubernetes tree; EVICTKIT is the evictkit checkout.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/package.sh"

add_feature_gate EvictionNegativeMaxPodGraceDefers Alpha false "owner: (the GitHub handle of whoever proposes it upstream)
kep: none yet; alpha only, a KEP is needed before beta

A negative evictionMaxPodGracePeriod makes the kubelet's soft evictions
give each pod its own terminationGracePeriodSeconds, as the flag's help
has always said (\"If negative, defer to pod specified value\"), instead
of passing the negative value on as the grace period (an immediate
kill)."
copy_package EvictionNegativeMaxPodGraceDefers

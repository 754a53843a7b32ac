#!/usr/bin/env bash
# Patch 0010: the EvictionExplain feature gate (alpha, off by default) and
# the eviction package's code for it. Runs inside the kubernetes tree;
# EVICTKIT is the evictkit checkout.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/package.sh"

add_feature_gate EvictionExplain Alpha false "owner: (the GitHub handle of whoever proposes it upstream)
kep: none yet; alpha only, a KEP is needed before beta

Each Evicted event the kubelet's eviction manager records ends with why
this pod: the signal, its observed value and threshold, the pod's rank,
the ranking rule that put it ahead, and the pod it was chosen over; the
decision is logged with the first ten ranked pods."
copy_package EvictionExplain

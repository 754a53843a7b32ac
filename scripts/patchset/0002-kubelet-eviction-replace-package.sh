#!/usr/bin/env bash
# Patch 0002: replace upstream's pkg/kubelet/eviction (all files but the
# api/ sub-package) with evictkit's package at upstream parity (no alpha
# feature's code), with its tests but not the fuzz targets. Runs inside
# the kubernetes tree; EVICTKIT is the evictkit checkout.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/package.sh"

copy_package

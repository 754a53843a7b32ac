#!/usr/bin/env bash
# Patch 0007: the eviction package's fuzz targets (threshold parsing, and
# the decision core against an independent reference model) with their
# seed corpora. Test code only. Runs inside the kubernetes tree; EVICTKIT
# is the evictkit checkout.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/package.sh"

copy_package fuzz

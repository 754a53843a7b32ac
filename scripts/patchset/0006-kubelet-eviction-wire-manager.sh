#!/usr/bin/env bash
# Patch 0006: the eviction manager rebuilt as a thin shell over the
# decision core, in place of upstream's files (all but the api/
# sub-package), at upstream parity (no alpha feature's code), with its
# tests but not the fuzz targets. Runs inside the kubernetes tree;
# EVICTKIT is the evictkit checkout.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/package.sh"

copy_package wired

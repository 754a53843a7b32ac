#!/usr/bin/env bash
# Patch 0002: the first part of the eviction decision core, added beside
# upstream's manager and not yet used by it: the signal table, signal
# observations and threshold evaluation, with their tests (scenario
# files included). Runs inside the kubernetes tree; EVICTKIT is the
# evictkit checkout.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/package.sh"

copy_package

#!/usr/bin/env bash
# Patch 0003: the decision core's filesystem layouts, pod usage, ranking
# and local storage limits, beside upstream's manager, with their tests.
# Runs inside the kubernetes tree; EVICTKIT is the evictkit checkout.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/package.sh"

copy_package ranking

#!/usr/bin/env bash
# Patch 0004: the decision core's pass (decide, advance, replan), eviction
# messages and admission, beside upstream's manager, with their tests.
# Runs inside the kubernetes tree; EVICTKIT is the evictkit checkout.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/package.sh"

copy_package decision

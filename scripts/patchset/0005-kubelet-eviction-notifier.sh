#!/usr/bin/env bash
# Patch 0005: the memory threshold notifiers rewritten, in place of
# upstream's notifier files, still under upstream's manager, with their
# tests. Runs inside the kubernetes tree; EVICTKIT is the evictkit
# checkout.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/package.sh"

copy_package notifier

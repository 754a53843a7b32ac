#!/usr/bin/env bash
# Installs the Debian packages the cluster build needs on the host, if any
# is missing: debootstrap (node rootfs), nftables and iptables (the engine's
# firewall), libseccomp-dev + pkg-config (runc), e2fsprogs, util-linux and
# mount (dedicated filesystems), jq. Idempotent; apt runs only when needed.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/steps.sh"

install_missing debootstrap nftables iptables libseccomp-dev pkg-config e2fsprogs util-linux mount jq gcc make git

#!/usr/bin/env bash
# Installs the Debian packages the cluster build needs on the host, if any
# is missing: debootstrap (node rootfs), nftables and iptables (the engine's
# firewall), libseccomp-dev + pkg-config (runc), e2fsprogs, util-linux and
# mount (dedicated filesystems), jq. Idempotent; apt runs only when needed.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/steps.sh"

packages=(debootstrap nftables iptables libseccomp-dev pkg-config e2fsprogs util-linux mount jq gcc make git)
missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "${p}" 2>/dev/null | grep -q 'install ok installed' || missing+=("${p}")
done
if [[ ${#missing[@]} -eq 0 ]]; then
	exit 0
fi
[[ $(id -u) -eq 0 ]] || die "missing packages: ${missing[*]}" "run as root, or apt-get install ${missing[*]}"
step "host-deps: apt-get install ${missing[*]}"
start=${SECONDS}
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
note "installed in $((SECONDS - start)) s"

# Progress and error output shared by the scripts. Sourced, not run.
# shellcheck shell=bash

# step prints a progress line for a long step.
step() { printf '==> %s\n' "$*" >&2; }

# note prints a detail line under a step.
note() { printf '    %s\n' "$*" >&2; }

# die prints an error (and an optional hint) and exits 1.
#   die "what went wrong" ["what to do about it"]
die() {
	printf 'error: %s\n' "$1" >&2
	if [[ $# -gt 1 ]]; then
		printf 'hint:  %s\n' "$2" >&2
	fi
	exit 1
}

# require_cmd fails with a hint when a command is missing.
require_cmd() {
	command -v "$1" >/dev/null 2>&1 || die "$1 is not installed" "${2:-install $1 and retry}"
}

# repo_root is the evictkit checkout the scripts belong to.
repo_root() { cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd; }

# fixed identity and dates for every commit the scripts make, so that the
# same inputs always give byte-identical commits and patches.
export GIT_AUTHOR_NAME="evictkit developers" GIT_AUTHOR_EMAIL="dev@evictkit.invalid"
export GIT_COMMITTER_NAME="evictkit developers" GIT_COMMITTER_EMAIL="dev@evictkit.invalid"
export GIT_AUTHOR_DATE="2026-01-01T00:00:00Z" GIT_COMMITTER_DATE="2026-01-01T00:00:00Z"

# install_missing PKG...: apt-get installs the Debian packages that are not
# installed yet (as root); nothing when all are.
install_missing() {
	local p missing=() start=${SECONDS}
	for p in "$@"; do
		[[ "$(dpkg-query -W -f='${Status}' "${p}" 2>/dev/null)" == *"install ok installed"* ]] || missing+=("${p}")
	done
	((${#missing[@]} > 0)) || return 0
	[[ $(id -u) -eq 0 ]] || die "missing packages: ${missing[*]}" "run as root, or apt-get install ${missing[*]}"
	step "apt-get install ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >/dev/null
	apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
	note "installed in $((SECONDS - start)) s"
}

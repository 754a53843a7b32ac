# Sourced: upstream Kubernetes releases as the Go module proxy serves them.
# Needs steps.sh and versions.sh.

# upstream_module_dir VERSION: prints the module cache directory of
# k8s.io/kubernetes@VERSION, downloading it if needed; a release that
# needs a newer Go than this machine's is fetched with NEWER_GO_TOOLCHAIN.
upstream_module_dir() {
	local version="$1" out dir
	out="$(go mod download -json "k8s.io/kubernetes@${version}" 2>/dev/null || true)"
	if grep -q '"Error": ".*requires go ' <<<"${out}"; then
		out="$(GOTOOLCHAIN="${NEWER_GO_TOOLCHAIN}" go mod download -json "k8s.io/kubernetes@${version}" 2>/dev/null || true)"
	fi
	dir="$(sed -n 's/^[[:space:]]*"Dir": "\([^"]*\)".*/\1/p' <<<"${out}")"
	[[ -n "${dir}" && -d "${dir}" ]] || return 1
	echo "${dir}"
}

# use_go_for GOMOD: exports GOTOOLCHAIN=NEWER_GO_TOOLCHAIN when the go line
# of GOMOD names a newer Go than this machine's.
use_go_for() {
	if needs_newer_go "$1"; then
		export GOTOOLCHAIN="${NEWER_GO_TOOLCHAIN}"
		note "$1 asks for $(sed -n 's/^go //p' "$1" | head -n 1), newer than this machine's Go: GOTOOLCHAIN=${GOTOOLCHAIN}"
	fi
}

# unserved_modules TREE PKG...: the modules the packages need that the Go
# module proxy refuses to serve (403), as "module version" (the version
# upstream's own go.mod requires) joined by
# ", "; empty when all are served. TREE is a tree scripts/upstream-tree.sh
# made (or a worktree of one). A release served only in part leaves those
# packages unbuildable, unless bases/standins has a stand-in for the module
# (scripts/upstream-tree.sh puts it in).
unserved_modules() {
	local tree="$1" miss mod out="" gomod
	shift
	# The pristine release is the parent of the build plumbing commit.
	gomod="$(git -C "${tree}" show 'evictkit-base^:go.mod' 2>/dev/null || true)"
	while IFS= read -r miss; do
		[[ -n "${miss}" ]] || continue
		# A package path: name the module upstream's go.mod requires for it.
		mod="$(awk -v p="${miss}" '$1 != "" && index(p "/", $1 "/") == 1 && $2 ~ /^v/ {print $1 " " $2; exit}' <<<"${gomod}")"
		out+="${out:+, }${mod:-${miss}}"
	done < <(cd "${tree}" && GOFLAGS=-mod=mod go list -deps "$@" 2>&1 >/dev/null |
		sed -nE 's/.*: module ([^ :]+): reading [^ ]+: 403.*/\1/p; s/.*[: ]([^ :]+@v[^ :]+): reading [^ ]+: 403.*/\1/p' | sort -u)
	printf '%s' "${out}"
}

# proxy_refuses MODULE VERSION: true when the Go module proxy refuses that
# version (403), false when it serves it or fails some other way.
proxy_refuses() {
	local out
	out="$(GOFLAGS= go mod download -json "$1@$2" 2>/dev/null || true)"
	grep -q '"Error": ".*403' <<<"${out}"
}

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
	local want have
	want="$(sed -n 's/^go \([0-9][0-9.]*\).*/\1/p' "$1" | head -n 1)"
	have="$(GOTOOLCHAIN=local go env GOVERSION | sed 's/^go//')"
	[[ -n "${want}" ]] || return 0
	if ! printf '%s\n%s\n' "${want}" "${have}" | sort -V -C; then
		export GOTOOLCHAIN="${NEWER_GO_TOOLCHAIN}"
		note "$1 needs Go ${want}, this machine has ${have}: GOTOOLCHAIN=${GOTOOLCHAIN}"
	fi
}

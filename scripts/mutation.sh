#!/usr/bin/env bash
# make mutation: mutation testing of pkg/kubelet/eviction with gremlins
# (github.com/go-gremlins/gremlins, pinned below): every mutant of the
# package's decision core files (the files in scripts/mutation/core.txt)
# is built and the package's unit tests and fuzz seeds run against it; a
# mutant the tests do not kill lived. gremlins skips mutants its coverage
# profile does not reach, and Go's coverage counts no case expression and
# no constant: the summary runs the tests on each of those itself
# (scripts/mutation/recheck.go). Prints the score per file and every
# surviving mutant with its source line (known equivalent mutants, with
# the reason each changes nothing, are in scripts/mutation/equivalent.txt)
# and writes _output/reports/mutation.md. Fails below MIN_SCORE percent
# (default 90) of non-equivalent mutants killed.
#
#   WORKERS=<n>  parallel mutants (default 1: each runs the tests on 2 CPUs)
#   FILES=<regexp> mutate only the core files matching (default all)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/steps.sh"
root="$(repo_root)"
cd "${root}"

GREMLINS_VERSION="v0.6.0"
bin="${root}/_output/bin"
gremlins="${bin}/gremlins-${GREMLINS_VERSION}"
if [[ ! -x "${gremlins}" ]]; then
	step "mutation: installing gremlins ${GREMLINS_VERSION}"
	mkdir -p "${bin}"
	GOBIN="${root}/_output/mutation/gobin" go install "github.com/go-gremlins/gremlins/cmd/gremlins@${GREMLINS_VERSION}"
	mv "${root}/_output/mutation/gobin/gremlins" "${gremlins}"
fi

# gremlins copies the module for each worker: a module of just the package.
src="${root}/_output/mutation/src"
rm -rf "${src}"
mkdir -p "${src}/pkg/kubelet"
cp go.mod go.sum "${src}/"
cp -r pkg/kubelet/eviction "${src}/pkg/kubelet/eviction"

core=()
while read -r f; do
	[[ -z "${f}" || "${f}" == \#* ]] || core+=("${f}")
done <scripts/mutation/core.txt
excludes=()
for f in "${src}"/pkg/kubelet/eviction/*.go; do
	name="$(basename "${f}")"
	[[ "${name}" == *_test.go ]] && continue
	keep=0
	for c in "${core[@]}"; do
		if [[ "${name}" == "${c}" && ( -z "${FILES:-}" || "${name}" =~ ${FILES} ) ]]; then
			keep=1
		fi
	done
	# gremlins matches the path below the package's directory.
	((keep)) || excludes+=(--exclude-files "(^|/)${name//./\\.}\$")
done

report="${root}/_output/reports/mutation.json"
mkdir -p "$(dirname "${report}")" "${root}/_output/logs"
step "mutation: gremlins on ${#core[@]} core files of pkg/kubelet/eviction (${WORKERS:-1} worker(s)); about 10 s a mutant"
start=${SECONDS}
(cd "${src}" && "${gremlins}" unleash ./pkg/kubelet/eviction --workers "${WORKERS:-1}" --timeout-coefficient 3 \
	--output "${report}" "${excludes[@]}" >"${root}/_output/logs/mutation.log" 2>&1) ||
	die "gremlins failed" "see _output/logs/mutation.log"
note "done in $((SECONDS - start)) s"
go run ./scripts/mutation -report "${report}" -src "${src}" -recheck pkg/kubelet/eviction -core scripts/mutation/core.txt -equivalent scripts/mutation/equivalent.txt \
	-out "${root}/_output/reports/mutation.md" -min "${MIN_SCORE:-90}"

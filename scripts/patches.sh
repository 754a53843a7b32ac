#!/usr/bin/env bash
# The evictkit patch series: generate it from the code, verify it, apply it.
#
#   scripts/patches.sh generate [OUTDIR]  write the series (default patches/)
#   scripts/patches.sh verify             fail unless patches/ is exactly what
#                                         generate writes and applies with git am
#   scripts/patches.sh apply DIR          check out the patched tree into DIR
#
# Each patch is defined by scripts/patchset/NNNN-slug.sh (edits the
# kubernetes tree, run from its top with EVICTKIT set) and NNNN-slug.msg
# (the commit message). Commits use a fixed identity and date, and
# format-patch runs with --zero-commit and --full-index, so the same code
# always gives byte-identical patches.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/steps.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/versions.sh"
source "$(dirname "${BASH_SOURCE[0]}")/patchset/checks.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/stage-parity.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/upstream-module.sh"

root="$(repo_root)"
# UPSTREAM_TREE: another materialized release to generate on (make rebase).
upstream="${UPSTREAM_TREE:-$(upstream_dir "${root}")}"
patchset="${root}/scripts/patchset"
# The series: on the default base, patches/ (committed, what reviewers
# read); on another base (K8S_VERSION), generated from the same code into
# _output/patches/<version> whenever it is verified or applied.
if [[ "${K8S_VERSION}" == "${K8S_DEFAULT_VERSION}" || -n "${UPSTREAM_TREE:-}" ]]; then
	patches="${root}/patches"
	committed=1
else
	patches="${root}/_output/patches/${K8S_VERSION}"
	committed=0
fi
base="evictkit-base"

# Temporary worktrees and directories, removed on exit whatever happens.
cleanup_worktrees=()
cleanup_dirs=()
cleanup() {
	local d
	for d in "${cleanup_worktrees[@]}"; do
		git -C "${upstream}" worktree remove --force "${d}" 2>/dev/null || rm -rf "${d}"
	done
	[[ ${#cleanup_worktrees[@]} -eq 0 ]] || git -C "${upstream}" worktree prune
	for d in "${cleanup_dirs[@]}"; do rm -rf "${d}"; done
}
trap cleanup EXIT

# new_scratch NAME: sets work to a new directory under _output that is
# removed on exit, together with the worktree at work/NAME.
new_scratch() {
	mkdir -p "${root}/_output"
	work="$(mktemp -d "${root}/_output/patches-scratch.XXXXXX")"
	cleanup_dirs+=("${work}")
	cleanup_worktrees+=("${work}/$1")
}

ensure_upstream() {
	[[ -z "${UPSTREAM_TREE:-}" ]] || return 0
	bash "${root}/scripts/upstream-tree.sh" "${upstream}"
}

# fresh_worktree DIR: a detached checkout of the base commit at DIR.
fresh_worktree() {
	local dir="$1"
	if [[ -e "${dir}" ]]; then
		git -C "${upstream}" worktree remove --force "${dir}" 2>/dev/null || rm -rf "${dir}"
	fi
	git -C "${upstream}" worktree prune
	git -C "${upstream}" worktree add -q --detach "${dir}" "${base}"
}

messages_ok() {
	check_messages "${patchset}" || die "commit messages do not follow the series' rules" "fix the .msg files in scripts/patchset"
}

added_lines_ok() {
	check_added_lines "$1" || die "the series adds lines that name evictkit (upstream code must not)" "rename or reword them in the code, then: make patches"
}

# generate [OUTDIR]: CHECKS=0 leaves the checks to the caller.
generate() {
	local out="${1:-${patches}}"
	[[ "${CHECKS:-1}" == 0 ]] || messages_ok
	ensure_upstream
	local work
	new_scratch tree
	fresh_worktree "${work}/tree"
	local defs=("${patchset}"/[0-9][0-9][0-9][0-9]-*.sh)
	[[ -e "${defs[0]}" ]] || die "no patch definitions in ${patchset}"
	for def in "${defs[@]}"; do
		local msg="${def%.sh}.msg"
		[[ -f "${msg}" ]] || die "$(basename "${def}") has no commit message file $(basename "${msg}")"
		step "patches: $(basename "${def%.sh}")"
		(cd "${work}/tree" && EVICTKIT="${root}" bash "${def}") ||
			die "patch definition $(basename "${def}") failed"
		if git -C "${work}/tree" diff --cached --quiet; then
			die "$(basename "${def}") changed nothing"
		fi
		git -C "${work}/tree" commit -q --no-verify -F "${msg}"
	done
	mkdir -p "${work}/out"
	git -C "${work}/tree" format-patch -q --zero-commit --no-signature --full-index \
		-o "${work}/out" "${base}..HEAD"
	[[ "${CHECKS:-1}" == 0 ]] || added_lines_ok "${work}/out"
	(cd "${work}/out" && ls -1 -- *.patch) >"${work}/out/series"
	mkdir -p "${out}"
	find "${out}" -maxdepth 1 \( -name '*.patch' -o -name series \) -delete
	cp "${work}/out"/* "${out}/"
	step "patches: wrote $(grep -c . "${out}/series") patch(es) to ${out#"${root}"/}"
}

# reset_checkout DIR: put an existing checkout back at the base commit.
reset_checkout() {
	local dir="$1"
	[[ -e "${dir}/.git" ]] || return 1
	git -C "${dir}" am --abort >/dev/null 2>&1 || true
	git -C "${dir}" checkout -q -f --detach "${base}" 2>/dev/null || return 1
	git -C "${dir}" clean -q -f -d -x 2>/dev/null
}

# apply_series DIR: DIR becomes the base commit with patches/ applied by git am.
apply_series() {
	local dir="$1"
	if [[ "${committed}" == 0 ]]; then
		generate
	fi
	[[ -f "${patches}/series" ]] || die "patches/series is missing" "run: make patches"
	ensure_upstream
	# Reuse the checkout (a stable path keeps the Go build cache warm); an
	# interrupted earlier run may have left it unusable, then start over.
	if ! reset_checkout "${dir}"; then
		note "checking out ${base} in ${dir#"${root}"/}"
		fresh_worktree "${dir}"
	fi
	local p
	while IFS= read -r p; do
		[[ -n "${p}" ]] || continue
		[[ -f "${patches}/${p}" ]] || die "patches/series names ${p}, which does not exist" "run: make patches"
		if ! git -C "${dir}" am -q --keep-cr "${patches}/${p}" >/dev/null 2>"${dir}.am.log"; then
			git -C "${dir}" am --abort >/dev/null 2>&1 || true
			die "patch ${p} does not apply to ${K8S_VERSION} with git am ($(head -n 3 "${dir}.am.log" | tr '\n' ' '))" \
				"regenerate the series with: make patches"
		fi
	done <"${patches}/series"
	rm -f "${dir}.am.log"
}

# each_patch_builds DIR: the tree after each patch of the series applied
# in DIR passes go vet on the eviction package, pkg/features and every
# other package whose Go files the patch changes (a patch that only builds
# with a later one cannot be reviewed or bisected), and the eviction
# package's tests as they are at that commit pass in the tree, upstream's
# own included where the commit keeps them. Built as the kubelet is
# (static, -trimpath), so the kubelet build's cache serves. Then the
# package's code as the commit has it is copied into evictkit's module,
# where the short parity run (every gate off) builds against it.
not_built=()
each_patch_builds() {
	local dir="$1" commit subject line
	local parity="${root}/_output/verify-parity"
	cleanup_dirs+=("${parity}")
	local -a pkgs
	while IFS= read -r commit; do
		subject="$(git -C "${dir}" log -1 --format=%s "${commit}")"
		git -C "${dir}" checkout -q --detach "${commit}"
		mapfile -t pkgs < <(git -C "${dir}" diff --name-only "${commit}^" "${commit}" -- '*.go' |
			grep -v -e '^pkg/kubelet/eviction/' -e '^pkg/features/' | xargs -r -n1 dirname | sort -u | sed 's#^#./#')
		# Packages that need a module the proxy refuses (a release served in
		# part) cannot be built here: said, not counted as built.
		local unserved=""
		if ((${#pkgs[@]} > 0)); then
			unserved="$(unserved_modules "${dir}" "${pkgs[@]}")"
			if [[ -n "${unserved}" ]]; then
				note "NOT BUILT here after: ${subject}: ${pkgs[*]} (needs ${unserved}, which the Go module proxy does not serve)"
				not_built+=("${pkgs[*]} after ${commit:0:12}")
				pkgs=()
			fi
		fi
		(cd "${dir}" && CGO_ENABLED=0 GOFLAGS=-mod=mod go vet -trimpath ./pkg/kubelet/eviction/... ./pkg/features/ "${pkgs[@]}") ||
			die "the tree does not build after patch: ${subject}" "fix the code of that patch's feature, then: make patches"
		if git -C "${dir}" diff --quiet "${commit}^" "${commit}" -- pkg/kubelet/eviction; then
			note "builds after: ${subject}"
			continue
		fi
		(cd "${dir}" && CGO_ENABLED=0 GOFLAGS=-mod=mod go test -trimpath -count=1 ./pkg/kubelet/eviction/ >"${dir}.test.log" 2>&1) || {
			grep -E -- '^(--- FAIL|FAIL|panic)|_test\.go:[0-9]+:' "${dir}.test.log" | head -n 20 >&2 || true
			die "the eviction package's tests fail in the tree after patch: ${subject}" "fix them, then: make patches"
		}
		note "builds, and the package's tests pass, after: ${subject} ($(grep -o '[0-9.]*s$' "${dir}.test.log" | tail -n 1))"
		rm -f "${dir}.test.log"
		rm -rf "${parity}/eviction" && mkdir -p "${parity}/eviction"
		find "${dir}/pkg/kubelet/eviction" -maxdepth 1 -name '*.go' ! -name '*_test.go' -exec cp {} "${parity}/eviction/" \;
		line="$(stage_parity "${parity}/eviction" "${parity}/harness")" ||
			die "the short parity run fails on the package after patch: ${subject}" "fix that patch's code, then: make patches"
		note "  ${line}"
	done < <(git -C "${dir}" rev-list --reverse "${base}..HEAD")
}

verify() {
	local work
	new_scratch applied
	step "verify-patches: commit messages"
	messages_ok
	step "verify-patches: regenerating the series from the code"
	CHECKS=0 generate "${work}/expected" 2>/dev/null
	added_lines_ok "${work}/expected"
	local drift identical="byte-identical to patches/"
	if [[ "${committed}" == 0 ]]; then
		# Another base has no committed series: the one just generated is it.
		identical="generated on ${K8S_VERSION}"
		find "${patches}" -maxdepth 1 \( -name '*.patch' -o -name series \) -delete 2>/dev/null || true
		mkdir -p "${patches}" && cp "${work}/expected"/* "${patches}/"
	else
		drift="$(diff -r -q --exclude=README.md "${work}/expected" "${patches}" 2>&1 || true)"
		if [[ -n "${drift}" ]]; then
			printf '%s\n' "${drift}" | sed "s#${work}/expected#<generated>#; s#${root}/##" >&2
			diff -r -u --exclude=README.md "${work}/expected" "${patches}" | head -n 40 >&2 || true
			die "patches/ is not what make patches generates from the code" "run: make patches, review and commit the result"
		fi
	fi
	step "verify-patches: applying the series to ${K8S_VERSION} with git am"
	committed=1 apply_series "${work}/applied"
	each_patch_builds "${work}/applied"
	step "verify-patches: OK on ${K8S_VERSION} ($(grep -c . "${patches}/series") patch(es), ${identical}, messages and added lines checked, apply cleanly, each builds and passes the package's tests and the short parity run)"
	((${#not_built[@]} == 0)) || note "but NOT BUILT here (modules the proxy does not serve): ${not_built[*]}"
}

case "${1:-}" in
generate) shift; generate "$@" ;;
verify) verify ;;
apply)
	[[ $# -eq 2 ]] || die "usage: $0 apply DIR"
	apply_series "$2"
	;;
*) die "usage: $0 generate [OUTDIR] | verify | apply DIR" ;;
esac

#!/usr/bin/env bash
# Patch 0001: replace upstream's pkg/kubelet/eviction (all files but the
# api/ sub-package) with evictkit's package, tests and fuzz corpora
# included. Runs inside the kubernetes tree; EVICTKIT is the evictkit
# checkout.
set -euo pipefail
: "${EVICTKIT:?EVICTKIT must name the evictkit checkout}"

dest=pkg/kubelet/eviction
src="${EVICTKIT}/pkg/kubelet/eviction"

# Remove every upstream file of the package itself; api/ stays upstream's.
find "${dest}" -mindepth 1 -maxdepth 1 ! -name api -exec git rm -r -q --cached --ignore-unmatch {} +
find "${dest}" -mindepth 1 -maxdepth 1 ! -name api -exec rm -rf {} +

# Copy ours: Go files and test data, nothing generated or ignored.
git -C "${EVICTKIT}" ls-files --cached --others --exclude-standard -- pkg/kubelet/eviction |
	sed 's#^pkg/kubelet/eviction/##' |
	while IFS= read -r f; do
		[[ -f "${src}/${f}" ]] || continue
		case "${f}" in api/*) continue ;; esac
		mkdir -p "${dest}/$(dirname "${f}")"
		cp "${src}/${f}" "${dest}/${f}"
	done

# Our module path becomes upstream's, should the package ever import a
# sub-package of its own.
{ grep -rl 'github.com/evictkit/evictkit/' "${dest}" --include='*.go' || true; } |
	xargs -r sed -i 's#github.com/evictkit/evictkit/#k8s.io/kubernetes/#g'

# Every Go file carries the license boilerplate upstream's verify scripts
# expect, after the build constraint if there is one (where gofmt wants it).
year=2026
boilerplate() {
	printf '/*\nCopyright %s The Kubernetes Authors.\n\n' "${year}"
	printf 'Licensed under the Apache License, Version 2.0 (the "License");\n'
	printf 'you may not use this file except in compliance with the License.\n'
	printf 'You may obtain a copy of the License at\n\n'
	printf '    http://www.apache.org/licenses/LICENSE-2.0\n\n'
	printf 'Unless required by applicable law or agreed to in writing, software\n'
	printf 'distributed under the License is distributed on an "AS IS" BASIS,\n'
	printf 'WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.\n'
	printf 'See the License for the specific language governing permissions and\n'
	printf 'limitations under the License.\n*/\n\n'
}
for f in $(find "${dest}" -maxdepth 1 -name '*.go' | sort); do
	if head -n 5 "${f}" | grep -q 'Copyright'; then
		continue
	fi
	if head -n 1 "${f}" | grep -q '^//go:build '; then
		{ head -n 1 "${f}"; echo; boilerplate; tail -n +2 "${f}" | sed '1{/^$/d}'; } >"${f}.new"
	else
		{ boilerplate; cat "${f}"; } >"${f}.new"
	fi
	mv "${f}.new" "${f}"
done
if unformatted="$(gofmt -l "${dest}")" && [[ -n "${unformatted}" ]]; then
	echo "not gofmt-clean after adding the boilerplate: ${unformatted}" >&2
	exit 1
fi
git add -A -f "${dest}"

#!/usr/bin/env bash
# Builds upstream's node e2e suite as upstream wrote it, for make
# test-upstream-node:
#   _output/upstream-e2e/bin/e2e_node.test   upstream's test/e2e_node
#   _output/upstream-e2e/bin/ginkgo          the Ginkgo CLI of its go.mod
# from the pristine upstream tree (upstream's sources plus the
# build-plumbing commit, which touches no file under test/). Before it
# builds, it checks that every file under test/ is the pristine commit's,
# byte for byte, and prints the git tree hashes of test/e2e_node and
# test/e2e/framework so a report can name exactly what ran.
#
# Usage: scripts/build-upstream-e2e.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/steps.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/versions.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/kube-build.sh"

root="$(repo_root)"
bin="${root}/_output/upstream-e2e/bin"
pristine_tag="upstream-${K8S_VERSION}"

require_cmd go "Go 1.26 is expected at /usr/local/go/bin"
require_cmd git "apt-get install git"

tree="$(pristine_tree "${root}")"

# Pristine test sources: no change against upstream's commit, in the
# index or the working tree, and no file added.
step "upstream e2e: checking test/ against ${pristine_tag}"
git -C "${tree}" diff --quiet "${pristine_tag}" -- test/ ||
	die "test/ in ${tree#"${root}"/} differs from ${pristine_tag}: $(git -C "${tree}" diff --stat "${pristine_tag}" -- test/ | tail -1)" \
		"upstream's tests run unmodified; remove the tree (rm -rf _output/src/kubernetes-upstream) and run again"
extra="$(git -C "${tree}" ls-files --others -- test/)"
[[ -z "${extra}" ]] ||
	die "test/ in ${tree#"${root}"/} has files ${pristine_tag} does not: $(head -3 <<<"${extra}" | tr '\n' ' ')" \
		"remove the tree (rm -rf _output/src/kubernetes-upstream) and run again"
for d in test/e2e_node test/e2e/framework; do
	note "${d}: git tree $(git -C "${tree}" rev-parse "${pristine_tag}:${d}") (as ${pristine_tag})"
done

mkdir -p "${bin}"
start=${SECONDS}
step "upstream e2e: building e2e_node.test (${K8S_VERSION})"
(cd "${tree}" && CGO_ENABLED=0 GOFLAGS=-mod=mod go test -c -trimpath -buildvcs=false \
	-ldflags "$(kube_ldflags "${K8S_VERSION}" "${tree}")" -o "${bin}/e2e_node.test" ./test/e2e_node) ||
	die "building test/e2e_node in ${tree} failed" "see the compiler output above"
note "e2e_node.test built in $((SECONDS - start)) s"

start=${SECONDS}
ginkgo_version="$(cd "${tree}" && GOFLAGS=-mod=mod go list -m -f '{{.Version}}' github.com/onsi/ginkgo/v2)"
step "upstream e2e: building ginkgo ${ginkgo_version}"
(cd "${tree}" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -buildvcs=false \
	-o "${bin}/ginkgo" github.com/onsi/ginkgo/v2/ginkgo) ||
	die "building ginkgo ${ginkgo_version} in ${tree} failed" "see the compiler output above"
note "ginkgo built in $((SECONDS - start)) s"
step "upstream e2e: ready in ${bin#"${root}"/}"

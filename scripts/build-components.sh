#!/usr/bin/env bash
# Builds every other component of the kind cluster from source, offline, from
# the Go module proxy, at the versions pinned in scripts/lib/versions.sh:
#   host engine   dockerd, docker-proxy (moby), containerd, containerd-shim-runc-v2,
#                 ctr, runc
#   node          the same containerd/runc, crictl, CNI plugins (cni/), our
#                 pause (images/pause)
#   control plane kube-apiserver, kube-controller-manager, kube-scheduler,
#                 kube-proxy (pristine upstream tree), etcd, coredns (with
#                 kubeadm's plugins only: images/coredns)
#   tools         kind
# into _output/bin; what differs between upstream bases (the Kubernetes
# commands, etcd, coredns) into the base's directory (_output/bin/<version>
# on a base other than the default). A binary is rebuilt only when what it
# is built from changes (a stamp file records module, version and flags).
#
# Usage: scripts/build-components.sh [NAME...]   (default: all)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/steps.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/versions.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/kube-build.sh"

root="$(repo_root)"
bin="${root}/_output/bin"
kbin="$(base_bin_dir "${root}")"
stamps="${bin}/.stamps"
work="${root}/_output/build/components"
mkdir -p "${bin}/cni" "${kbin}" "${stamps}" "${work}"

# The base's Go toolchain (a newer one than this machine's, on a base whose
# go.mod asks for it) builds only that base's Kubernetes commands; all else
# is built with this machine's Go, whatever the base, so it is shared.
base_toolchain="${GOTOOLCHAIN:-local}"
export GOTOOLCHAIN=local
unset GOFLAGS

require_cmd go "Go 1.26 is expected at /usr/local/go/bin"
require_cmd gcc "apt-get install gcc (containerd and runc link with cgo)"

# How everything is built, part of every stamp: -trimpath and
# -buildvcs=false make a binary depend only on its sources, not on where or
# in which checkout it was built, so the node image's hash is stable.
recipe_flags="trimpath buildvcs=false"
recipe="$(go env GOVERSION) ${recipe_flags}"

# fresh OUT STAMP: true when OUT exists and was built from STAMP.
fresh() {
	[[ -x "$1" && -f "${stamps}/${1#"${bin}"/}" ]] && [[ "$(cat "${stamps}/${1#"${bin}"/}")" == "$2" ]]
}
mark() {
	mkdir -p "$(dirname "${stamps}/${1#"${bin}"/}")"
	printf '%s' "$2" >"${stamps}/${1#"${bin}"/}"
}

# gomod_build OUT MODULE@VERSION PACKAGE [TAGS] [CGO_ENABLED] [LDFLAGS]
# Builds PACKAGE with MODULE at VERSION as a dependency of a throw-away main
# module, so the module's own requirements are used as published (its
# replace directives, which point into its source repository, do not apply).
gomod_build() {
	local out="$1" modver="$2" pkg="$3" tags="${4:-}" cgo="${5:-0}" ldflags="${6:-}"
	local stamp="${modver} ${pkg} tags=${tags} cgo=${cgo} ldflags=${ldflags} ${recipe}"
	if fresh "${out}" "${stamp}"; then
		note "$(basename "${out}"): up to date (${modver})"
		return
	fi
	local name dir start=${SECONDS}
	name="$(basename "${out}")"
	dir="${work}/${name}"
	step "build: ${name} from ${modver}"
	rm -rf "${dir}" && mkdir -p "${dir}"
	(
		cd "${dir}"
		go mod init "evictkit.invalid/build/${name}" >/dev/null 2>&1
		GOFLAGS=-mod=mod go get "${modver}" >/dev/null 2>&1 || GOFLAGS=-mod=mod go get "${modver}"
		CGO_ENABLED="${cgo}" GOFLAGS=-mod=mod go build -trimpath -buildvcs=false -tags "${tags}" \
			-ldflags "-s -w ${ldflags}" -o "${out}" "${pkg}"
	) || die "building ${pkg} (${modver}) failed" "see the compiler output above"
	mark "${out}" "${stamp}"
	note "${name} built in $((SECONDS - start)) s"
}

# local_build OUT DIR [MODFILE]: a main package of ours (DIR, in this module
# or a module of its own, built with MODFILE instead of its go.mod when
# given), static.
local_build() {
	local out="$1" dir="$2" modfile="${3:-}" stamp start=${SECONDS}
	stamp="$(cd "${dir}" && { find . -maxdepth 1 -type f \( -name '*.go' -o -name go.mod -o -name go.sum \) -print0 |
		sort -z | xargs -0 sha256sum; [[ -z "${modfile}" ]] || sha256sum "${modfile}" "${modfile%.mod}.sum"; } |
		sha256sum | cut -c1-16) ${recipe}"
	if fresh "${out}" "${stamp}"; then
		note "$(basename "${out}"): up to date (${dir#"${root}"/})"
		return
	fi
	step "build: $(basename "${out}") (${dir#"${root}"/})"
	(cd "${dir}" && CGO_ENABLED=0 GOFLAGS="-mod=mod${modfile:+ -modfile=${modfile}}" go build -trimpath -buildvcs=false -ldflags "-s -w" -o "${out}" .) ||
		die "building ${dir#"${root}"/} failed" "see the compiler output above"
	mark "${out}" "${stamp}"
	note "$(basename "${out}") built in $((SECONDS - start)) s"
}

# kube_component OUT PKG [BASE]: a command of the pristine upstream tree of
# BASE (default: the base in use), built with that base's toolchain.
kube_component() {
	local out="$1" pkg="$2" from="${3:-${K8S_VERSION}}" toolchain="${base_toolchain}" tree stamp
	[[ "${from}" == "${K8S_VERSION}" ]] || toolchain=local
	(
		# exported: pristine_tree may run scripts/upstream-tree.sh for BASE
		export K8S_VERSION="${from}" GOTOOLCHAIN="${toolchain}"
		tree="$(pristine_tree "${root}")"
		stamp="${from} $(git -C "${tree}" rev-parse HEAD) ${pkg} $(go env GOVERSION) ${recipe_flags} static"
		if fresh "${out}" "${stamp}"; then
			note "$(basename "${out}"): up to date (${from})"
			exit 0
		fi
		kube_build "${tree}" "${from}" "${out}" "${pkg}"
		mark "${out}" "${stamp}"
	)
}

containerd_ldflags="-X github.com/containerd/containerd/v2/version.Version=${CONTAINERD_VERSION} -X github.com/containerd/containerd/v2/version.Revision=evictkit"
moby_ldflags="-X github.com/moby/moby/v2/dockerversion.Version=${MOBY_VERSION#v} -X github.com/moby/moby/v2/dockerversion.GitCommit=evictkit"

build_one() {
	case "$1" in
	kind) gomod_build "${bin}/kind" "sigs.k8s.io/kind@${KIND_VERSION}" sigs.k8s.io/kind ;;
	containerd)
		local m="github.com/containerd/containerd/v2@${CONTAINERD_VERSION}" t="no_aufs no_zfs no_btrfs no_devmapper"
		gomod_build "${bin}/containerd" "${m}" github.com/containerd/containerd/v2/cmd/containerd "${t}" 1 "${containerd_ldflags}"
		gomod_build "${bin}/containerd-shim-runc-v2" "${m}" github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 "${t}" 0 "${containerd_ldflags}"
		gomod_build "${bin}/ctr" "${m}" github.com/containerd/containerd/v2/cmd/ctr "${t}" 0 "${containerd_ldflags}"
		;;
	runc)
		require_cmd pkg-config "apt-get install pkg-config libseccomp-dev (runc is built with seccomp)"
		pkg-config --exists libseccomp || die "libseccomp-dev is not installed" "apt-get install libseccomp-dev"
		gomod_build "${bin}/runc" "github.com/opencontainers/runc@${RUNC_VERSION}" github.com/opencontainers/runc \
			"seccomp urfave_cli_no_docs" 1 "-X main.version=${RUNC_VERSION#v}"
		;;
	dockerd)
		gomod_build "${bin}/dockerd" "github.com/moby/moby/v2@${MOBY_VERSION}" github.com/moby/moby/v2/cmd/dockerd "" 1 "${moby_ldflags}"
		gomod_build "${bin}/docker-proxy" "github.com/moby/moby/v2@${MOBY_VERSION}" github.com/moby/moby/v2/cmd/docker-proxy "" 0
		;;
	crictl) gomod_build "${bin}/crictl" "sigs.k8s.io/cri-tools@${CRICTL_VERSION}" sigs.k8s.io/cri-tools/cmd/crictl "" 0 \
		"-X sigs.k8s.io/cri-tools/pkg/version.Version=${CRICTL_VERSION}" ;;
	cni)
		local p
		for p in ipam/host-local main/loopback main/ptp meta/portmap; do
			gomod_build "${bin}/cni/$(basename "${p}")" "github.com/containernetworking/plugins@${CNI_PLUGINS_VERSION}" \
				"github.com/containernetworking/plugins/plugins/${p}"
		done
		;;
	etcd) gomod_build "${kbin}/etcd" "go.etcd.io/etcd/server/v3@${ETCD_VERSION}" go.etcd.io/etcd/server/v3 ;;
	coredns)
		# Our main with kubeadm's plugins only (images/coredns, its own
		# module; on a base other than the default with the go.mod of
		# images/coredns/bases/<version>).
		local pinned modfile
		modfile="$(base_path "${root}/images/coredns" /bases/)/go.mod"
		[[ -f "${modfile}" ]] || die "${modfile#"${root}"/} is missing: coredns ${COREDNS_VERSION} for ${K8S_VERSION} needs it" \
			"cp images/coredns/go.mod images/coredns/go.sum $(dirname "${modfile#"${root}"/}")/ and go get github.com/coredns/coredns@${COREDNS_VERSION} with -modfile"
		pinned="$(awk '$1 == "require" && $2 == "github.com/coredns/coredns" {print $3}' "${modfile}")"
		[[ "${pinned}" == "${COREDNS_VERSION}" ]] ||
			die "${modfile#"${root}"/} requires coredns ${pinned:-?}, scripts/lib/versions.sh says ${COREDNS_VERSION}" \
				"cd images/coredns && go get -modfile=${modfile} github.com/coredns/coredns@${COREDNS_VERSION} && go mod tidy -modfile=${modfile}"
		[[ "${modfile}" != "${root}/images/coredns/go.mod" ]] || modfile=""
		local_build "${kbin}/coredns" "${root}/images/coredns" "${modfile}"
		;;
	pause) local_build "${bin}/pause" "${root}/images/pause" ;;
	control-plane)
		kube_component "${kbin}/kube-apiserver" ./cmd/kube-apiserver
		kube_component "${kbin}/kube-controller-manager" ./cmd/kube-controller-manager
		kube_component "${kbin}/kube-scheduler" ./cmd/kube-scheduler
		# From KUBE_PROXY_BASE (scripts/lib/versions.sh says why).
		kube_component "${kbin}/kube-proxy" ./cmd/kube-proxy "${KUBE_PROXY_BASE}"
		;;
	*) die "unknown component: $1" "one of: kind containerd runc dockerd crictl cni etcd coredns pause control-plane" ;;
	esac
}

all=(kind runc containerd dockerd crictl cni pause etcd coredns control-plane)
start=${SECONDS}
for c in "${@:-${all[@]}}"; do
	build_one "${c}"
done
step "build-components: done in $((SECONDS - start)) s"

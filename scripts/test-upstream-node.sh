#!/usr/bin/env bash
# make test-upstream-node: upstream's own node e2e suite (test/e2e_node of
# the pristine tree, unmodified) against one kubelet, on a node container of
# its own started from the kind node image.
#
# The suite is built to run on the node it tests: with --start-services it
# runs etcd, an apiserver and a namespace controller in its own process and
# starts the kubelet next to its binary as a transient systemd unit, which
# it reconfigures and restarts for each spec. So the node here is the node
# image's systemd and containerd without kubeadm; the kubelet under test is
# copied in as the suite's kubelet; scripts/upstream-node/provision.sh
# arranges what the suite assumes of a node. Nothing under test/ changes
# (scripts/build-upstream-e2e.sh checks it, byte for byte, before building).
#
# Environment:
#   KUBELET  evictkit (default) or upstream: which kubelet the suite starts;
#            or control-NAME, a negative control's broken kubelet
#            (scripts/control-kubelet.sh NAME), which the table leaves out
#   FOCUS    the suite's --focus regexp (default: upstream's eviction specs,
#            '\[Feature:Eviction\]')
#   SKIP     the suite's --skip regexp (default: none)
#   REPEAT   extra passes, each a fresh run of the suite (default 0); every
#            pass runs, and the table counts passes per spec
#   NODES    Ginkgo's parallel processes (default 1; upstream's NodeConformance
#            lane uses 8; [Serial] specs still run alone)
#   NODEFS_SIZE
#            the node's dedicated filesystem for the kubelet's root dir, pod
#            logs and containerd (default 12G: the disk specs consume 4 GiB)
#   KEEP_NODE=1
#            leave the node container (and its filesystem) running
#
# Reports: upstream's JUnit per pass in _output/reports/upstream-node-e2e/,
# as <kubelet>-<focus key>-pass<N>.xml (the key hashes FOCUS and SKIP; the
# .focus file beside them says which): a run replaces the passes of its own
# focus on its kubelet and keeps the others', so runs of different specs
# add up. make test-upstream-node tables them all, both kubelets side by
# side, in _output/reports/upstream-node-e2e.md; remove the directory to
# start over.
#
# Usage: scripts/test-upstream-node.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/steps.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/engine-env.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/upstream-node-reports.sh"

root="$(repo_root)"
kubelet="${KUBELET:-evictkit}"
focus="${FOCUS:-\[Feature:Eviction\]}"
skip="${SKIP:-}"
repeat="${REPEAT:-0}"
nodes="${NODES:-1}"
nodefs_size="${NODEFS_SIZE:-12G}"
node="evictkit-upstream-node"
files="evictkit-upstream-node-files"
# A bridge network of its own: the engine has no default bridge, and the
# suite's apiserver needs a default route to pick its address.
network="evictkit-upstream-node"
state="${root}/_output/upstream-node"
reports="${root}/_output/reports/upstream-node-e2e"
in_node=/opt/evictkit-e2e

case "${kubelet}" in
evictkit) kubelet_bin="${root}/_output/bin/kubelet" ;;
upstream) kubelet_bin="${root}/_output/bin/kubelet-upstream" ;;
control-*) kubelet_bin="${root}/_output/bin/kubelet-${kubelet}" ;;
*) die "KUBELET=${kubelet}: want evictkit, upstream or control-NAME" ;;
esac
# node_down: the container, then its filesystem and the loop device under it.
node_down() {
	docker rm -f "${node}" "${files}" >/dev/null 2>&1 || true
	if mountpoint -q "${state}/nodefs"; then
		umount "${state}/nodefs" || return 1
	fi
	local dev
	for dev in $(losetup -j "${state}/nodefs.img" -O NAME -n 2>/dev/null); do
		losetup -d "${dev}" || return 1
	done
	rm -f "${state}/nodefs.img"
	if docker network inspect "${network}" >/dev/null 2>&1; then
		docker network rm "${network}" >/dev/null || return 1
	fi
}
cleanup() {
	local rc=$?
	if [[ "${KEEP_NODE:-}" == 1 ]]; then
		note "KEEP_NODE=1: ${node} keeps running (docker exec -it ${node} bash; make test-upstream-node-down removes it)"
	else
		step "test-upstream-node: removing ${node} and its filesystem"
		node_down || rc=1
	fi
	exit "${rc}"
}

if [[ "${1:-}" == down ]]; then
	step "test-upstream-node: removing ${node} and its filesystem"
	node_down
	exit 0
fi

[[ "${repeat}" =~ ^[0-9]+$ ]] || die "REPEAT=${repeat}: want a count of extra passes (0, 1, ...)"
[[ "${nodes}" =~ ^[1-9][0-9]*$ ]] || die "NODES=${nodes}: want a count of parallel processes (1, 2, ...)"
[[ "${nodefs_size}" =~ ^[0-9]+[MG]$ ]] || die "NODEFS_SIZE=${nodefs_size}: want a size such as 12G or 8192M"
for f in "${kubelet_bin}" "${root}/_output/upstream-e2e/bin/e2e_node.test" "${root}/_output/upstream-e2e/bin/ginkgo" "${root}/_output/node-image"; do
	[[ -e "${f}" ]] || die "${f#"${root}"/} is missing" "make kubelet upstream-e2e node-image (make test-upstream-node does; a control kubelet: scripts/control-kubelet.sh NAME)"
done
image="$(cat "${root}/_output/node-image")"
registry_deb_dir="${root}/_output/build/upstream-node-images/debs"
docker info >/dev/null 2>&1 || die "the project's Docker engine is not running" "scripts/engine.sh up"

step "test-upstream-node: test images under upstream's names"
mkdir -p "${state}"
bash "${root}/scripts/upstream-node-images.sh" >"${state}/images.tsv"
mapfile -t archives < <(cut -f1 "${state}/images.tsv" | sort -u)
mapfile -t refs < <(cut -f2 "${state}/images.tsv")
((${#archives[@]} > 0 && ${#refs[@]} > 0)) || die "scripts/upstream-node-images.sh listed no image"

step "test-upstream-node: the registry for the node (Debian's docker-registry)"
mkdir -p "${registry_deb_dir}"
registry_deb="$(find "${registry_deb_dir}" -name 'docker-registry_*.deb' | head -1)"
if [[ -z "${registry_deb}" ]]; then
	(cd "${registry_deb_dir}" && apt-get download -q docker-registry 2>&1 | grep -v '^W: Download is performed unsandboxed' >&2) ||
		die "apt-get download docker-registry failed" "check access to Debian's repositories (apt-get update)"
	registry_deb="$(find "${registry_deb_dir}" -name 'docker-registry_*.deb' | head -1)"
fi
rm -rf "${state}/registry-deb" && mkdir -p "${state}/registry-deb"
dpkg-deb -x "${registry_deb}" "${state}/registry-deb"

node_down
trap cleanup EXIT
step "test-upstream-node: ${nodefs_size} filesystem for the node's kubelet, pod logs and containerd"
mkdir -p "${state}/nodefs"
truncate -s "${nodefs_size}" "${state}/nodefs.img"
mkfs.ext4 -q -F -m 0 -L evk-upstream "${state}/nodefs.img"
mount -o loop "${state}/nodefs.img" "${state}/nodefs"
mkdir -p "${state}/nodefs/kubelet" "${state}/nodefs/pod-logs" "${state}/nodefs/containerd"
docker run --rm --network none --entrypoint /bin/cp -v "${state}/nodefs/containerd:/evictkit-dst" "${image}" \
	-a /var/lib/containerd/. /evictkit-dst/

step "test-upstream-node: starting ${node} from ${image}"
docker network create "${network}" >/dev/null
# kind's flags for a node container (sigs.k8s.io/kind, provider docker). A
# private cgroup namespace matters on this cgroup v1 host: without it the
# node sees the host's unified hierarchy from its root, systemd puts the pod
# slices elsewhere than runc looks, and every exec into a container fails.
docker run -d --name "${node}" --hostname "${node}" \
	--privileged --security-opt seccomp=unconfined --security-opt apparmor=unconfined \
	--init=false --cgroupns=private \
	--tmpfs /tmp --tmpfs /run -v /var -v /lib/modules:/lib/modules:ro -e container=docker \
	--label evictkit.dev/upstream-node=true --network "${network}" \
	-v "${state}/nodefs/kubelet:/var/lib/kubelet" -v "${state}/nodefs/pod-logs:/var/log/pods" \
	-v "${state}/nodefs/containerd:/var/lib/containerd" \
	"${image}" >/dev/null
for _ in $(seq 1 120); do
	s="$(docker exec "${node}" systemctl is-system-running 2>/dev/null || true)"
	[[ "${s}" == running || "${s}" == degraded ]] && break
	sleep 1
done
[[ "${s}" == running || "${s}" == degraded ]] || die "${node}: systemd did not come up within 120 s (state: ${s:-none})"
docker exec "${node}" systemctl is-active -q containerd || die "${node}: containerd is not active"

step "test-upstream-node: the suite, ginkgo and the ${kubelet} kubelet in over the node's network"
# Upstream's runner copies its test archive (the same three binaries) to the
# node over SSH, so the node's eth0 has carried some hundred MB when the
# suite starts, and the Summary API spec expects at least 1 MB received and
# 10 KB sent there. Here they come the same way: a busybox httpd on the
# node's network serves them and the node fetches them with curl.
docker exec "${node}" mkdir -p "${in_node}/images" /var/lib/evictkit-e2e/work /var/lib/evictkit-e2e/report
rm -rf "${state}/serve" && mkdir -p "${state}/serve"
cp "${root}/_output/upstream-e2e/bin/e2e_node.test" "${root}/_output/upstream-e2e/bin/ginkgo" "${state}/serve/"
cp "${kubelet_bin}" "${state}/serve/kubelet"
docker run -d --name "${files}" --network "${network}" --label evictkit.dev/upstream-node=true \
	-v "${state}/serve:/srv:ro" "$(bash "${root}/scripts/upstream-node/busybox.sh")" httpd -f -p 8080 -h /srv >/dev/null
files_ip="$(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "${files}")"
for f in e2e_node.test ginkgo kubelet; do
	docker exec "${node}" curl -fsS --retry 10 --retry-connrefused --retry-delay 1 -o "${in_node}/${f}" "http://${files_ip}:8080/${f}" ||
		die "${node} could not fetch ${f} from ${files} (${files_ip}:8080)"
	docker exec "${node}" chmod 0755 "${in_node}/${f}"
	[[ "$(docker exec "${node}" sha256sum "${in_node}/${f}" | cut -d' ' -f1)" == "$(sha256sum "${state}/serve/${f}" | cut -d' ' -f1)" ]] ||
		die "${f} arrived in ${node} changed"
done
docker rm -f "${files}" >/dev/null
rm -rf "${state}/serve"
note "eth0 of ${node}: $(docker exec "${node}" cat /sys/class/net/eth0/statistics/rx_bytes) bytes received, $(docker exec "${node}" cat /sys/class/net/eth0/statistics/tx_bytes) sent"
step "test-upstream-node: copying the images in"
docker cp -q "${state}/registry-deb/usr/bin/docker-registry" "${node}:${in_node}/docker-registry"
docker cp -q "${root}/scripts/upstream-node/provision.sh" "${node}:${in_node}/provision.sh"
for a in "${archives[@]}"; do
	docker cp -q "${a}" "${node}:${in_node}/images/$(basename "${a}")"
done
printf '%s\n' "${refs[@]}" | docker exec -i "${node}" tee "${in_node}/images.txt" >/dev/null
# upstream's CI kubelet configuration (test/e2e_node/jenkins/default-kubelet-config.yaml),
# cgroupfs driver included (provision.sh gives the node's containerd the
# same), with what this node needs: the host runs cgroup v1, which v1.37's
# kubelet refuses unless told not to. The cluster domain is what upstream's
# runner gives the kubelet and the suite (hack/make-rules/test-e2e-node.sh).
docker exec -i "${node}" tee "${in_node}/kubeletconfig.yaml" >/dev/null <<'CFG'
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
cgroupRoot: /
failCgroupV1: false
podCIDR: "10.100.0.0/24"
clusterDomain: cluster.local
volumeStatsAggPeriod: 10s
fileCheckFrequency: 10s
evictionPressureTransitionPeriod: 30s
evictionHard:
  memory.available: 250Mi
  nodefs.available: 10%
  nodefs.inodesFree: 5%
evictionMinimumReclaim:
  nodefs.available: 5%
  nodefs.inodesFree: 5%
serializeImagePulls: false
CFG

step "test-upstream-node: arranging the node for the suite"
docker exec "${node}" bash "${in_node}/provision.sh"

mkdir -p "${reports}"
key="$(upstream_node_key "${focus}" "${skip}")"
rm -f "${reports}/${kubelet}-${key}"-pass*
printf 'focus: %s\nskip: %s\n' "${focus}" "${skip}" >"${reports}/${kubelet}-${key}.focus"
# The runtime flags are those upstream's containerd node e2e lanes give
# (containerd's process and unit, the kubelet's --runtime-cgroups, which the
# Summary API's "runtime" system container needs), with this node's path.
rc=0
for pass in $(seq 0 "${repeat}"); do
	step "test-upstream-node: pass $((pass + 1)) of $((repeat + 1)), kubelet ${kubelet}, focus ${focus}${skip:+, skip ${skip}}"
	docker exec "${node}" bash -c 'rm -rf /var/lib/evictkit-e2e/report/* /var/lib/evictkit-e2e/work/*'
	start=${SECONDS}
	prc=0
	docker exec -w /var/lib/evictkit-e2e/work "${node}" "${in_node}/ginkgo" \
		--nodes="${nodes}" --timeout=8h --no-color --v \
		--focus="${focus}" ${skip:+--skip="${skip}"} \
		--junit-report=/var/lib/evictkit-e2e/report/junit.xml \
		"${in_node}/e2e_node.test" -- \
		--start-services=true --stop-services=true --node-name="${node}" --dns-domain=cluster.local \
		--prepull-images=false \
		--kubelet-config-file="${in_node}/kubeletconfig.yaml" \
		--container-runtime-endpoint=unix:///run/containerd/containerd.sock \
		--container-runtime-process-name=/usr/local/bin/containerd --container-runtime-pid-file= \
		--kubelet-flags="--runtime-cgroups=/system.slice/containerd.service" \
		--report-dir=/var/lib/evictkit-e2e/report || prc=$?
	note "pass $((pass + 1)): the suite exited ${prc} after $((SECONDS - start)) s"
	docker cp -q "${node}:/var/lib/evictkit-e2e/report/junit.xml" "${reports}/${kubelet}-${key}-pass$((pass + 1)).xml" ||
		die "pass $((pass + 1)) left no JUnit report" "see the suite's output above"
	docker cp -q "${node}:/var/lib/evictkit-e2e/report/kubelet.log" "${reports}/${kubelet}-${key}-pass$((pass + 1))-kubelet.log" 2>/dev/null || true
	ran="$(grep -c -E '<testcase name="\[It\] [^"]*" classname="[^"]*" status="(passed|failed|panicked|interrupted|aborted|timedout)"' "${reports}/${kubelet}-${key}-pass$((pass + 1)).xml" || true)"
	if [[ "${ran}" == 0 ]]; then
		note "pass $((pass + 1)) ran no spec: FOCUS=${focus} selects none (or every one skipped itself)"
		rc=1
	fi
	[[ "${prc}" == 0 ]] || rc=1
done
exit "${rc}"

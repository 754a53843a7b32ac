#!/bin/bash
# Runs inside a container of evictkit/node-base with the staging directory
# mounted at /evictkit-build (see scripts/node-image.sh): installs the
# binaries and files, kind's base files, enables the units and preloads the
# images into containerd's k8s.io namespace. The container is then committed
# as the node image.
set -euo pipefail
s=/evictkit-build
log() { echo "    assemble: $*"; }

log "binaries"
install -m 0755 -t /usr/local/bin "${s}"/bin/{containerd,containerd-shim-runc-v2,ctr,crictl}
install -m 0755 -D "${s}/bin/runc" /usr/local/sbin/runc
install -m 0755 -d /opt/cni/bin
install -m 0755 -t /opt/cni/bin "${s}"/bin/cni/*
install -m 0755 -t /usr/bin "${s}"/bin/{kubeadm,kubectl}
install -m 0755 "${s}/bin/kubelet" /usr/bin/kubelet-evictkit
install -m 0755 "${s}/bin/kubelet-upstream" /usr/bin/kubelet-upstream
ln -sfn kubelet-evictkit /usr/bin/kubelet

log "kind's base files"
k="${s}/kind-base"
install -m 0755 -t /usr/local/bin "${k}"/usr/local/bin/*
mkdir -p /kind/bin /kind/manifests /etc/containerd /etc/default /etc/sysctl.d /etc/systemd/system/kubelet.service.d
install -m 0644 "${k}/kind/README.txt" /kind/README.txt
install -m 0755 -t /kind/bin "${k}"/kind/bin/*
install -m 0644 "${k}/etc/crictl.yaml" /etc/crictl.yaml
install -m 0644 -t /etc/default "${k}"/etc/default/*
install -m 0644 -t /etc/sysctl.d "${k}"/etc/sysctl.d/*
install -m 0644 -t /etc/systemd/system "${k}"/etc/systemd/system/*.service "${k}"/etc/systemd/system/*.slice
install -m 0644 -t /etc/systemd/system/kubelet.service.d "${k}"/etc/systemd/system/kubelet.service.d/*
# containerd: kind's config with the sandbox image kubeadm expects, and
# restrict_oom_score_adj (root in these hosts' containers lacks
# CAP_SYS_RESOURCE, so pods may not lower their oom_score_adj).
sed -e "s#sandbox_image = .*#sandbox_image = \"registry.k8s.io/pause:$(cat "${s}/pause-tag")\"#" \
	-e 's#restrict_oom_score_adj = .*#restrict_oom_score_adj = true#' \
	"${k}/etc/containerd/config.toml" >/etc/containerd/config.toml
grep -q 'restrict_oom_score_adj = true' /etc/containerd/config.toml
# The OCI spec every pod container starts from: containerd's default, plus
# kind's hook that mounts the product UUID, without rlimits.
ctr oci spec |
	jq '.hooks.createContainer += [{"path": "/kind/bin/mount-product-files.sh"}] | del(.process.rlimits)' \
		>/etc/containerd/cri-base.json

log "evictkit's files"
cp -a "${s}/node-files/." /
chmod 0755 /usr/local/bin/evictkit-*
echo "$(cat "${s}/kube-version")" >/kind/version
mkdir -p /etc/kubernetes/manifests /etc/cni/net.d

log "units"
systemctl enable kubelet.service containerd.service undo-mount-hacks.service evictkit-dns.service evictkit-podnet.service >/dev/null 2>&1
systemctl mask systemd-binfmt.service >/dev/null 2>&1

log "preloading images"
mkdir -p /var/lib/containerd
containerd --log-level warn >/tmp/containerd.log 2>&1 &
pid=$!
for _ in $(seq 1 100); do
	ctr version >/dev/null 2>&1 && break
	sleep 0.1
done
ctr version >/dev/null || { cat /tmp/containerd.log; exit 1; }
for tar in "${s}"/images/*.tar; do
	ctr -n k8s.io images import --no-unpack --digests "${tar}" >/dev/null 2>/tmp/ctr.log || { cat /tmp/ctr.log; exit 1; }
done
# --digests names each image by its tag and by "import-<date>@<digest>";
# keep only the names kubeadm and the kubelet ask for.
ctr -n k8s.io images ls -q 2>/dev/null | grep -v '^registry.k8s.io/' | xargs -r ctr -n k8s.io images rm >/dev/null 2>&1
preloaded="$(ctr -n k8s.io images ls -q 2>/dev/null)"
sed 's/^/      /' <<<"${preloaded}"
for want in $(cat "${s}/image-names"); do
	grep -qxF "${want}" <<<"${preloaded}" || { echo "assemble: ${want} was not preloaded" >&2; exit 1; }
done
kill "${pid}"
wait "${pid}" || true
rm -rf /run/containerd /tmp/containerd.log /tmp/ctr.log /var/lib/containerd/tmpmounts
log "done"

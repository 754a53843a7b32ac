#!/bin/bash
# Runs inside the upstream-node container, as root, once, before upstream's
# node e2e suite runs there (scripts/test-upstream-node.sh copies it in with
# what it needs under /opt/evictkit-e2e). It adapts the node to what the
# suite assumes, never the suite:
#   - the suite starts its own kubelet, as a transient systemd unit
#     kubelet-<timestamp>.service, with its own apiserver and etcd in its
#     process: kind's kubelet.service and evictkit-podnet (both need
#     kubeadm's files) stay off;
#   - it runs `sudo ...`: a pass-through, as the suite already runs as root;
#   - pods get upstream's fixed node CIDR 10.100.0.0/24 (no node
#     controller): a static ptp CNI network on it;
#   - specs pull upstream's test images with ImagePullPolicy Always: a
#     registry on this node's loopback serves the locally built images and
#     containerd uses it as registry.k8s.io's mirror, so a pull is a real
#     pull that never leaves the node;
#   - containerd's runc uses the cgroupfs driver, as the kubelet does in
#     upstream's node e2e configuration;
#   - the kubelet's /kubelet.slice must exist in every cgroup v1 hierarchy,
#     and containerd's cgroup in the cpu and memory ones.
set -euo pipefail
dir=/opt/evictkit-e2e
step() { printf '    node: %s\n' "$*"; }

step "kubelet.service and evictkit-podnet.service disabled and stopped (the suite runs its own kubelet)"
systemctl disable --now kubelet.service evictkit-podnet.service >/dev/null 2>&1

step "sudo: pass-through for root"
cat >/usr/local/bin/sudo <<'SUDO'
#!/bin/sh
# evictkit upstream-node: the suite runs as root; sudo runs its command as is.
exec "$@"
SUDO
chmod 0755 /usr/local/bin/sudo

step "CNI: ptp on 10.100.0.0/24"
mkdir -p /etc/cni/net.d
cat >/etc/cni/net.d/10-evictkit.conflist <<'CNI'
{
  "cniVersion": "1.0.0",
  "name": "evictkit",
  "plugins": [
    {
      "type": "ptp",
      "ipMasq": true,
      "mtu": 1500,
      "ipam": {
        "type": "host-local",
        "dataDir": "/run/cni-ipam-state",
        "routes": [{ "dst": "0.0.0.0/0" }],
        "ranges": [[{ "subnet": "10.100.0.0/24" }]]
      }
    },
    { "type": "portmap", "capabilities": { "portMappings": true } }
  ]
}
CNI

step "registry on 127.0.0.1:5000, registry.k8s.io's mirror"
mkdir -p /var/lib/evictkit-registry
cat >"${dir}/registry.yml" <<'REG'
version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: /var/lib/evictkit-registry
  delete:
    enabled: true
http:
  addr: 127.0.0.1:5000
REG
if ! systemctl is-active -q evictkit-registry.service; then
	systemctl reset-failed evictkit-registry.service >/dev/null 2>&1 || true
	systemd-run -q --unit=evictkit-registry.service "${dir}/docker-registry" serve "${dir}/registry.yml"
fi
for _ in $(seq 1 50); do
	curl -fsS -o /dev/null http://127.0.0.1:5000/v2/ && break
	sleep 0.2
done
curl -fsS -o /dev/null http://127.0.0.1:5000/v2/ || { echo "error: the registry did not answer on 127.0.0.1:5000" >&2; exit 1; }
mkdir -p /etc/containerd/certs.d/registry.k8s.io
cat >/etc/containerd/certs.d/registry.k8s.io/hosts.toml <<'HOSTS'
server = "https://registry.k8s.io"

[host."http://127.0.0.1:5000"]
  capabilities = ["pull", "resolve"]
HOSTS
restart=false
if ! grep -q 'config_path = "/etc/containerd/certs.d"' /etc/containerd/config.toml; then
	cat >>/etc/containerd/config.toml <<'TOML'

# evictkit upstream-node: registry mirrors (the node's own registry)
[plugins."io.containerd.grpc.v1.cri".registry]
  config_path = "/etc/containerd/certs.d"
TOML
	restart=true
fi

step "containerd: runc's cgroupfs driver, as the kubelet's (upstream's node e2e configuration)"
# Upstream's CI kubelet configuration uses cgroupfs. With the systemd driver
# on cgroup v1, runc freezes each new container's cgroup while it applies
# the unit's properties, and gives up ("unable to freeze") when the node is
# too busy for the freeze to finish: under the disk specs' writers that
# failed test pods before the kubelet ever saw them.
if grep -q 'SystemdCgroup = true' /etc/containerd/config.toml; then
	sed -i 's/SystemdCgroup = true/SystemdCgroup = false/' /etc/containerd/config.toml
	restart=true
fi
if [[ "${restart}" == true ]]; then
	systemctl restart containerd
fi
for _ in $(seq 1 50); do
	ctr version >/dev/null 2>&1 && break
	sleep 0.2
done

step "containerd.service: CPU and memory accounting"
# The kubelet reads the runtime's stats (the Summary API's "runtime" system
# container, --runtime-cgroups) from containerd's cgroup. On cgroup v1
# systemd puts a unit into the cpu and memory hierarchies only when its
# accounting is on; on cgroup v2, where upstream's CI runs, it always is.
systemctl set-property --runtime containerd.service CPUAccounting=yes MemoryAccounting=yes

step "images: imported and pushed to the node's registry"
for archive in "${dir}"/images/*.tar; do
	ctr -n k8s.io images import --no-unpack "${archive}" >/dev/null
done
for ref in $(cat "${dir}/images.txt"); do
	ctr -n k8s.io images push --plain-http "127.0.0.1:5000/${ref#registry.k8s.io/}" "${ref}" >/dev/null
	printf '      %s\n' "${ref}"
done

step "kubelet cgroups"
/usr/local/bin/evictkit-kubelet-cgroups

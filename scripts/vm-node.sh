#!/usr/bin/env bash
# A cgroup v2 Kubernetes node: a QEMU VM (TCG: /dev/kvm here is PVM) of
# Debian's cloud kernel booted with cgroup_no_v1=all, whose root disk is the
# kind node image's filesystem (containerd, both kubelets, the preloaded
# images) plus sshd, joined with kubeadm to a running kind cluster's control
# plane as a production node runs: systemd cgroup driver, failCgroupV1 and
# cgroupRoot at the kubelet's defaults. Its network interface is a tap port
# on the kind network's bridge, so it is a peer of the kind nodes.
#
#   scripts/vm-node.sh up        boot and join (idempotent: a running VM is kept)
#   scripts/vm-node.sh down      delete the Node, stop the VM, remove its tap
#                                and disk (the cached base disk stays)
#   scripts/vm-node.sh ssh CMD   run CMD on the VM as root
#   scripts/vm-node.sh status    print the VM's state
#
#   CLUSTER=<name>     the kind cluster to join (default evictkit)
#   VM_NAME=<name>     the node's name (default <cluster>-v2)
#   KUBELET=evictkit|upstream   the kubelet it joins with (default evictkit)
#   VM_MEMORY=<MiB>    (default 6144)   VM_CPUS=<n> (default 2)
#   VM_DISK=<size>     the root disk, sparse (default 20G)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/steps.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/versions.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/engine-env.sh"
root="$(repo_root)"
source "${root}/scripts/lib/vm-kernel.sh"

cluster="${CLUSTER:-evictkit}"
name="${VM_NAME:-${cluster}-v2}"
kubelet="${KUBELET:-evictkit}"
memory="${VM_MEMORY:-6144}"
cpus="${VM_CPUS:-2}"
disk_size="${VM_DISK:-20G}"
[[ "${kubelet}" == evictkit || "${kubelet}" == upstream ]] || die "KUBELET must be evictkit or upstream, not '${kubelet}'"
[[ "${memory}" =~ ^[0-9]+$ ]] || die "VM_MEMORY must be MiB as a number, not '${memory}'"
[[ "${cpus}" =~ ^[0-9]+$ ]] || die "VM_CPUS must be a number, not '${cpus}'"
[[ "${name}" =~ ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ ]] || die "VM_NAME '${name}' is not a valid node name"

state="${EVICTKIT_STATE_DIR:-/var/lib/evictkit}"
cache="${state}/cache/vm-node"
run="${state}/vm-node/${name}"
key="${state}/vm-node/id_ed25519"
control_plane="${cluster}-control-plane"
# A tap name is at most 15 characters: a short hash of the VM's name.
tap="evkvm-$(printf '%s' "${name}" | sha256sum | cut -c1-8)"

ssh_opts=(-i "${key}" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR
	-o ConnectTimeout=5 -o BatchMode=yes)

# vm_ip: the address the VM was booted with.
vm_ip() { cat "${run}/ip" 2>/dev/null; }

# on_vm CMD...: runs CMD on the VM as root.
on_vm() { ssh "${ssh_opts[@]}" "root@$(vm_ip)" "$@"; }

# qemu_pid: the PID of this VM's QEMU when it runs, else nothing.
qemu_pid() {
	local pid
	pid="$(cat "${run}/qemu.pid" 2>/dev/null)" || return 0
	[[ -n "${pid}" && -r "/proc/${pid}/cmdline" ]] || return 0
	[[ "$(tr '\0' ' ' <"/proc/${pid}/cmdline")" == *"-name ${name} "* ]] && echo "${pid}"
	return 0
}

# cp_kubectl ARGS...: kubectl on the control plane, as its admin.
cp_kubectl() { docker exec "${control_plane}" kubectl --kubeconfig /etc/kubernetes/admin.conf "$@"; }

# ip4_int / int_ip4: IPv4 address <-> integer.
ip4_int() {
	local a b c d
	IFS=. read -r a b c d <<<"$1"
	echo $(((a << 24) | (b << 16) | (c << 8) | d))
}
int_ip4() { echo "$((($1 >> 24) & 255)).$((($1 >> 16) & 255)).$((($1 >> 8) & 255)).$(($1 & 255))"; }

# base_disk: the VM's root filesystem, built once per node image, kernel
# and VM files: the node image's filesystem, the kernel's modules, sshd
# (Debian's openssh-server, installed in a chroot) with our key, and
# images/vm-node/files. Sets base.
base_disk() {
	local image hash rootfs cid
	image="$(cat "${root}/_output/node-image" 2>/dev/null)" || die "no node image was built here" "run: make node-image"
	docker image inspect "${image}" >/dev/null 2>&1 || die "the node image ${image} is not in the engine" "run: make node-image"
	hash="$(
		{
			docker image inspect -f '{{.Id}}' "${image}"
			echo "${vm_kernel_version}"
			cat "${BASH_SOURCE[0]}" "${root}/scripts/lib/vm-kernel.sh" "${key}.pub"
			(cd "${root}/images/vm-node" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
		} | sha256sum | cut -c1-12
	)"
	base="${cache}/base-${hash}.raw"
	if [[ -f "${base}" ]]; then
		note "base disk ${base} exists"
		return
	fi
	step "vm-node: base disk from ${image} (${disk_size}, sparse)"
	local start=${SECONDS}
	rootfs="${root}/_output/build/vm-rootfs"
	rm -rf "${rootfs}" && mkdir -p "${rootfs}" "${cache}"
	cid="$(docker create --entrypoint /bin/true "${image}")"
	docker export "${cid}" | tar -x -C "${rootfs}" --numeric-owner --xattrs --xattrs-include='*' ||
		{ docker rm -f "${cid}" >/dev/null; die "exporting ${image} failed"; }
	docker rm -f "${cid}" >/dev/null
	note "node image exported in $((SECONDS - start)) s"

	mkdir -p "${rootfs}/usr/lib/modules"
	cp -a "${vm_kernel_root}/lib/modules/${vm_kernel_version}" "${rootfs}/usr/lib/modules/"

	# sshd from Debian, in a chroot of the rootfs (the host's resolver and
	# a /dev of its own, removed again; nothing is mounted).
	rm -rf "${rootfs:?}/dev" && mkdir -p "${rootfs}/dev"
	mknod -m 666 "${rootfs}/dev/null" c 1 3
	mknod -m 666 "${rootfs}/dev/zero" c 1 5
	mknod -m 666 "${rootfs}/dev/urandom" c 1 9
	mknod -m 666 "${rootfs}/dev/random" c 1 8
	rm -f "${rootfs}/etc/resolv.conf" && cp /etc/resolv.conf "${rootfs}/etc/resolv.conf"
	step "vm-node: apt-get install openssh-server (chroot)"
	chroot "${rootfs}" /bin/bash -euc '
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -q >/dev/null
		apt-get install -y -q --no-install-recommends openssh-server >/dev/null
		apt-get clean
		rm -rf /var/lib/apt/lists/*
	' >"${root}/_output/logs/vm-node-apt.log" 2>&1 ||
		{ tail -n 20 "${root}/_output/logs/vm-node-apt.log" >&2; die "installing openssh-server in the VM's rootfs failed" "see _output/logs/vm-node-apt.log"; }
	rm -rf "${rootfs:?}/dev" && mkdir -p "${rootfs}/dev"
	: >"${rootfs}/etc/resolv.conf"

	cp -a "${root}/images/vm-node/files/." "${rootfs}/"
	install -d -m 0700 "${rootfs}/root/.ssh"
	install -m 0600 "${key}.pub" "${rootfs}/root/.ssh/authorized_keys"
	# A VM boots systemd as PID 1 itself: no kind entrypoint, no mount hacks
	# to undo; a machine ID of its own on first boot ...
	: >"${rootfs}/etc/machine-id"
	chroot "${rootfs}" systemctl --quiet enable evictkit-vm-net.service ssh.service ||
		die "enabling evictkit-vm-net and ssh in the VM's rootfs failed"
	# ... and no kind hook copying the product files its entrypoint writes
	# over each container's DMI: the VM has DMI of its own.
	chroot "${rootfs}" /bin/sh -ec '
		jq ".hooks.createContainer |= map(select(.path != \"/kind/bin/mount-product-files.sh\"))" /etc/containerd/cri-base.json >/tmp/cri-base.json
		mv /tmp/cri-base.json /etc/containerd/cri-base.json
	' || die "removing kind's product-files hook from the VM's containerd spec failed"
	chroot "${rootfs}" systemctl --quiet disable undo-mount-hacks.service ||
		die "disabling undo-mount-hacks in the VM's rootfs failed"

	step "vm-node: mke2fs"
	mke2fs -q -t ext4 -L evictkit-vm -d "${rootfs}" -F "${base}.tmp" "${disk_size}"
	mv -f "${base}.tmp" "${base}"
	rm -rf "${rootfs}"
	find "${cache}" -maxdepth 1 -name 'base-*.raw' ! -name "base-${hash}.raw" -delete
	note "base disk built in $((SECONDS - start)) s ($(du -sh "${base}" | cut -f1) used)"
}

# initramfs: busybox, our init and the virtio modules in load order.
initramfs() {
	local dir="${run}/initramfs" m f seen=" "
	rm -rf "${dir}" && mkdir -p "${dir}"/{bin,proc,sys,dev,newroot,lib/modules}
	cp /bin/busybox "${dir}/bin/busybox"
	cp "${root}/images/vm-node/init" "${dir}/init"
	: >"${dir}/modules"
	for m in virtio_pci virtio_blk virtio_net; do
		for f in $(modprobe -d "${vm_kernel_root}" -S "${vm_kernel_version}" --show-depends "${m}" | awk '$1 == "insmod" {print $2}'); do
			[[ "${seen}" == *" ${f} "* ]] && continue
			seen+="${f} "
			cp "${f}" "${dir}/lib/modules/"
			basename "${f}" >>"${dir}/modules"
		done
	done
	(cd "${dir}" && find . -print0 | cpio --null -o -H newc --quiet | gzip -1) >"${run}/initramfs.gz"
	rm -rf "${dir}"
}

# network: the kind network the control plane is on, its bridge and an
# address for the VM at the top of its IPv4 subnet (Docker hands out
# addresses from the bottom). Sets net bridge gw addr prefix.
network() {
	local subnet cidr_base bits hi used
	net="$(docker inspect -f '{{range $k, $v := .NetworkSettings.Networks}}{{$k}} {{end}}' "${control_plane}" | awk '{print $1}')"
	[[ -n "${net}" ]] || die "${control_plane} is on no Docker network"
	subnet="$(docker network inspect -f '{{range .IPAM.Config}}{{.Subnet}} {{end}}' "${net}" | tr ' ' '\n' | grep -m1 '^[0-9.]*/[0-9]*$')"
	gw="$(docker network inspect -f '{{range .IPAM.Config}}{{.Gateway}} {{end}}' "${net}" | tr ' ' '\n' | grep -m1 '^[0-9.]*$')"
	[[ -n "${subnet}" && -n "${gw}" ]] || die "network ${net} has no IPv4 subnet and gateway"
	bridge="$(docker network inspect -f '{{index .Options "com.docker.network.bridge.name"}}' "${net}")"
	if [[ -z "${bridge}" || "${bridge}" == "<no value>" ]]; then
		bridge="br-$(docker network inspect -f '{{.Id}}' "${net}" | cut -c1-12)"
	fi
	[[ -d "/sys/class/net/${bridge}/bridge" ]] || die "network ${net}'s bridge ${bridge} does not exist on this machine"
	cidr_base="${subnet%/*}" bits="${subnet#*/}"
	hi=$(($(ip4_int "${cidr_base}") | ((1 << (32 - bits)) - 1)))
	addr="$(int_ip4 $((hi - 1)))"
	prefix="${bits}"
	used="$(docker network inspect -f '{{range .Containers}}{{.Name}}={{.IPv4Address}} {{end}}' "${net}" | tr ' ' '\n' | grep -F "=${addr}/" || true)"
	[[ -z "${used}" ]] || die "the VM's address ${addr} on ${net} is taken: ${used}"
}

up() {
	require_cmd docker "run: scripts/engine.sh up"
	docker version >/dev/null 2>&1 || die "the project's Docker engine does not answer on ${DOCKER_HOST}" "run: scripts/engine.sh up"
	docker inspect "${control_plane}" >/dev/null 2>&1 || die "the kind cluster ${cluster} is not running (no ${control_plane})" "bring it up first, e.g. make cluster"
	install_missing qemu-system-x86 qemu-utils seabios busybox-static cpio kmod openssh-client e2fsprogs
	if [[ -n "$(qemu_pid)" ]]; then
		note "vm-node: ${name} runs already (pid $(qemu_pid), $(vm_ip))"
		wait_ready
		return
	fi
	local total=${SECONDS}
	mkdir -p "${run}" "${root}/_output/logs" "$(dirname "${key}")"
	[[ -f "${key}" ]] || ssh-keygen -q -t ed25519 -N '' -C "evictkit-vm-node" -f "${key}"

	step "vm-node: kernel (${VM_KERNEL_METAPACKAGE})"
	vm_kernel_fetch
	base_disk
	initramfs
	network
	printf '%s\n' "${addr}" >"${run}/ip"
	printf '%s\n' "${cluster}" >"${run}/cluster"

	step "vm-node: ${name} at ${addr}/${prefix} on ${net} (${bridge}, tap ${tap})"
	ip link del "${tap}" 2>/dev/null || true
	ip tuntap add dev "${tap}" mode tap
	ip link set "${tap}" master "${bridge}"
	ip link set "${tap}" up
	rm -f "${run}/disk.qcow2"
	qemu-img create -q -f qcow2 -F raw -b "${base}" "${run}/disk.qcow2"
	local mac
	mac="52:54:00:$(printf '%s' "${name}" | sha256sum | sed 's/^\(..\)\(..\)\(..\).*/\1:\2:\3/')"
	: >"${run}/console.log"
	qemu-system-x86_64 -name "${name}" \
		-accel tcg,thread=multi -cpu max -smp "${cpus}" -m "${memory}" \
		-nodefaults -display none -no-reboot \
		-serial "file:${run}/console.log" \
		-kernel "${vm_kernel_image}" -initrd "${run}/initramfs.gz" \
		-append "console=ttyS0 root=/dev/vda cgroup_no_v1=all psi=1 panic=-1 evictkit.hostname=${name} evictkit.ip=${addr}/${prefix} evictkit.gw=${gw}" \
		-drive "file=${run}/disk.qcow2,if=virtio,format=qcow2,cache=unsafe" \
		-netdev "tap,id=net0,ifname=${tap},script=no,downscript=no" \
		-device "virtio-net-pci,netdev=net0,mac=${mac}" \
		-daemonize -pidfile "${run}/qemu.pid"
	note "QEMU pid $(cat "${run}/qemu.pid"), console ${run}/console.log"

	step "vm-node: booting (TCG; sshd answers when systemd is up)"
	local start=${SECONDS}
	until on_vm true 2>/dev/null; do
		[[ -n "$(qemu_pid)" ]] || { tail -n 30 "${run}/console.log" >&2; die "the VM stopped while booting" "see ${run}/console.log"; }
		((SECONDS - start < 600)) || { tail -n 30 "${run}/console.log" >&2; die "sshd on ${name} did not answer within 600 s" "see ${run}/console.log"; }
		sleep 2
	done
	note "sshd answers after $((SECONDS - start)) s"
	local fs kernel controllers
	read -r fs kernel controllers < <(on_vm 'echo "$(stat -fc %T /sys/fs/cgroup) $(uname -r) $(cat /sys/fs/cgroup/cgroup.controllers)"')
	[[ "${fs}" == cgroup2fs ]] || die "${name} does not run cgroup v2 (/sys/fs/cgroup is ${fs})"
	note "kernel ${kernel}, /sys/fs/cgroup ${fs}, controllers: ${controllers}"
	# Pod networking (veth), snapshots (overlay) and kube-proxy (bridge
	# netfilter) are modules of this kernel: fail here, not in every pod.
	on_vm 'modprobe -a veth overlay bridge br_netfilter' ||
		die "${name} cannot load the kernel modules pods need (veth overlay bridge br_netfilter)" "the root disk's module index may be missing: remove ${cache} and retry"

	join
	wait_ready
	step "vm-node: ${name} Ready in $((SECONDS - total)) s; scripts/vm-node.sh ssh CMD runs CMD on it"
}

# join: kubeadm join with a fresh token, the control plane's name in
# /etc/hosts (kind's endpoint is a container name), and the kubelet
# configuration patches of images/vm-node.
join() {
	local cp_ip cmd start=${SECONDS}
	cp_ip="$(docker inspect -f "{{(index .NetworkSettings.Networks \"${net}\").IPAddress}}" "${control_plane}")"
	on_vm "echo '${cp_ip} ${control_plane}' >>/etc/hosts"
	on_vm "ln -sfn kubelet-${kubelet} /usr/bin/kubelet"
	cmd="$(docker exec "${control_plane}" kubeadm token create --ttl 30m --print-join-command)"
	[[ "${cmd}" == "kubeadm join "* ]] || die "the control plane printed no join command: ${cmd}"
	step "vm-node: kubeadm join (kubelet-${kubelet})"
	on_vm "${cmd} --node-name ${name} --patches /etc/evictkit/kubeadm-patches --ignore-preflight-errors=all" \
		>"${root}/_output/logs/vm-node-join.log" 2>&1 ||
		{ tail -n 30 "${root}/_output/logs/vm-node-join.log" >&2; die "kubeadm join on ${name} failed" "see _output/logs/vm-node-join.log; scripts/vm-node.sh ssh journalctl -u kubelet"; }
	note "joined in $((SECONDS - start)) s"
}

wait_ready() {
	local start=${SECONDS} ready=""
	while ((SECONDS - start < 600)); do
		ready="$(cp_kubectl get node "${name}" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null || true)"
		[[ "${ready}" == True ]] && break
		sleep 2
	done
	[[ "${ready}" == True ]] || die "${name} did not become Ready within 600 s" "scripts/vm-node.sh ssh journalctl -u kubelet"
	cp_kubectl label node "${name}" --overwrite evictkit.dev/cgroup=v2 >/dev/null
	note "${name} Ready ($(cp_kubectl get node "${name}" -o jsonpath='{.status.nodeInfo.kubeletVersion}, {.status.nodeInfo.kernelVersion}'))"
}

down() {
	local pid
	if docker inspect "${control_plane}" >/dev/null 2>&1 && cp_kubectl get node "${name}" >/dev/null 2>&1; then
		cp_kubectl delete node "${name}" --wait=false >/dev/null && note "deleted node ${name}"
	fi
	pid="$(qemu_pid)"
	if [[ -n "${pid}" ]]; then
		kill -TERM "${pid}"
		for _ in $(seq 1 50); do
			[[ -d "/proc/${pid}" ]] || break
			sleep 0.2
		done
		[[ -d "/proc/${pid}" ]] && kill -KILL "${pid}"
		note "stopped the VM (pid ${pid})"
	fi
	if [[ -d "/sys/class/net/${tap}" ]]; then
		ip link del "${tap}" && note "removed tap ${tap}"
	fi
	rm -rf "${run}"
	step "vm-node: ${name} is down"
}

status() {
	local pid
	pid="$(qemu_pid)"
	if [[ -z "${pid}" ]]; then
		echo "${name}: not running"
		return 1
	fi
	echo "${name}: running (pid ${pid}, ${run}/console.log), address $(vm_ip), tap ${tap}"
}

case "${1:-}" in
up) up ;;
down) down ;;
ssh)
	shift
	[[ -n "$(qemu_pid)" ]] || die "${name} is not running" "run: scripts/vm-node.sh up"
	on_vm "$@"
	;;
status) status ;;
*) die "usage: scripts/vm-node.sh up|down|ssh CMD|status" ;;
esac

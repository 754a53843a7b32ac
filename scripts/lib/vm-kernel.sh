# The cgroup v2 VMs' kernel: the package Debian's cloud metapackage names
# today, taken out of its .deb into a cache (never installed on the host).
# Sourced, not run; needs steps.sh and versions.sh. Sets:
#   vm_kernel_version  e.g. 6.1.0-48-cloud-amd64
#   vm_kernel_root     the unpacked package (boot/, lib/modules/ with its index)
#   vm_kernel_image    its vmlinuz
# shellcheck shell=bash

vm_kernel_fetch() {
	local cache="${EVICTKIT_STATE_DIR:-/var/lib/evictkit}/cache/vm-kernel" kpkg kdir
	mkdir -p "${cache}"
	kpkg="$(apt-cache depends "${VM_KERNEL_METAPACKAGE}" 2>/dev/null | awk '/Depends: linux-image-/ {print $2; exit}')"
	if [[ -z "${kpkg}" ]]; then
		note "apt's index does not know ${VM_KERNEL_METAPACKAGE}: apt-get update"
		apt-get update -q >/dev/null
		kpkg="$(apt-cache depends "${VM_KERNEL_METAPACKAGE}" | awk '/Depends: linux-image-/ {print $2; exit}')"
	fi
	[[ -n "${kpkg}" ]] || die "cannot resolve ${VM_KERNEL_METAPACKAGE} to a kernel package"
	kdir="${cache}/${kpkg}"
	if [[ ! -f "${kdir}/done" ]]; then
		rm -rf "${kdir}" && mkdir -p "${kdir}"
		(cd "${kdir}" && apt-get download -q "${kpkg}" >/dev/null 2>&1) || die "apt-get download ${kpkg} failed"
		dpkg-deb -x "${kdir}"/*.deb "${kdir}/root"
		rm -f "${kdir}"/*.deb
		touch "${kdir}/done"
	fi
	vm_kernel_version="${kpkg#linux-image-}"
	vm_kernel_root="${kdir}/root"
	# The .deb ships no module index (the package's postinst makes it): a
	# root disk copied without one has modprobe find no module at all.
	if [[ ! -f "${vm_kernel_root}/lib/modules/${vm_kernel_version}/modules.dep" ]]; then
		require_cmd depmod "apt-get install kmod"
		depmod -b "${vm_kernel_root}" "${vm_kernel_version}"
	fi
	vm_kernel_image="${vm_kernel_root}/boot/vmlinuz-${vm_kernel_version}"
	[[ -f "${vm_kernel_image}" ]] || die "${kpkg} has no vmlinuz"
	note "${kpkg}"
}

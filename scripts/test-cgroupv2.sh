#!/usr/bin/env bash
# make test-cgroupv2: the eviction package's tests on a real cgroup v2
# kernel. These hosts are cgroup v1 and cannot switch, so the tests run in
# a QEMU VM (TCG: /dev/kvm here is PVM, on which QEMU's KVM mode does not
# boot) of Debian's cloud kernel, booted with cgroup_no_v1=all. The VM is
# an initramfs: busybox, the kernel's RAM disk module and the package's
# test binary, built static on the host. Every test runs, with
# EVICTION_TEST_REAL_CGROUPS=v2: a real-kernel test that cannot run fails.
#
#   RUN=<regexp>       only the matching tests (default: all)
#   VM_TIMEOUT=<secs>  how long the VM may run (default 1500)
#
# Prints the kernel version and the cgroup controllers, the tests' output
# (also in _output/logs/cgroupv2-vm.log), and a summary with every skipped
# test; fails when the VM does not start or finish, or a test fails.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/steps.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/versions.sh"
root="$(repo_root)"
cd "${root}"

source "${root}/scripts/lib/vm-kernel.sh"
out="${root}/_output/cgroupv2-vm"
logs="${root}/_output/logs"
mkdir -p "${out}" "${logs}"

# Host packages: QEMU and its BIOS, busybox for the guest, cpio.
install_missing qemu-system-x86 seabios busybox-static cpio kmod

step "test-cgroupv2: kernel (${VM_KERNEL_METAPACKAGE})"
vm_kernel_fetch
kver="${vm_kernel_version}"
vmlinuz="${vm_kernel_image}"
brd="${vm_kernel_root}/lib/modules/${kver}/kernel/drivers/block/brd.ko"
[[ -f "${brd}" ]] || die "linux-image-${kver} has no brd.ko"

step "test-cgroupv2: test binary (static)"
start=${SECONDS}
CGO_ENABLED=0 go test -c -o "${out}/eviction.test" ./pkg/kubelet/eviction
note "built in $((SECONDS - start)) s"

step "test-cgroupv2: initramfs"
rootfs="${out}/initramfs"
rm -rf "${rootfs}"
mkdir -p "${rootfs}"/{bin,proc,sys,dev,tmp,mnt,lib/modules}
cp /bin/busybox "${rootfs}/bin/busybox"
cp "${root}/images/cgroupv2-vm/init" "${rootfs}/init"
cp "${brd}" "${rootfs}/lib/modules/brd.ko"
cp "${out}/eviction.test" "${rootfs}/eviction.test"
# The package's test data (fuzz seeds among it), where the binary runs.
mkdir -p "${rootfs}/pkg"
cp -r pkg/kubelet/eviction/testdata "${rootfs}/pkg/testdata"
args="-test.v=test2json -test.count=1 -test.timeout=20m"
if [[ -n "${RUN:-}" ]]; then
	args+=" -test.run=${RUN}"
fi
printf '%s\n' "${args}" >"${rootfs}/test-args"
(cd "${rootfs}" && find . -print0 | cpio --null -o -H newc --quiet | gzip -1) >"${out}/initramfs.gz"

step "test-cgroupv2: booting the VM (QEMU TCG, 2 vCPUs, 2 GiB); the tests follow"
log="${logs}/cgroupv2-vm.log"
start=${SECONDS}
set +e
timeout "${VM_TIMEOUT:-1500}" qemu-system-x86_64 \
	-accel tcg,thread=multi -cpu max -smp 2 -m 2048 \
	-nographic -no-reboot -nodefaults -serial stdio \
	-kernel "${vmlinuz}" -initrd "${out}/initramfs.gz" \
	-append "console=ttyS0 cgroup_no_v1=all psi=1 panic=-1 quiet loglevel=3" \
	</dev/null 2>&1 | tr -d '\r' | tee "${log}" | grep --line-buffered '^evictkit-vm:'
qemu=${PIPESTATUS[0]}
set -e
note "VM ran $((SECONDS - start)) s (qemu exit ${qemu})"

grep -q '^evictkit-vm: kernel ' "${log}" || die "the VM did not start: no kernel line in ${log}" "see ${log}"
status="$(sed -n 's/^evictkit-vm: exit //p' "${log}" | tail -n1)"
[[ -n "${status}" ]] || die "the VM did not finish the tests (qemu exit ${qemu}; 124 is the timeout)" "see ${log}"

# The test binary's output in test2json form, as go test -json gives it.
go tool test2json -p github.com/evictkit/evictkit/pkg/kubelet/eviction <"${log}" |
	go run ./scripts/testreport -lane "cgroup v2 VM (${kver})"
[[ "${status}" == 0 ]] || die "the tests failed in the VM (exit ${status})" "see ${log}"

#!/usr/bin/env bash
# Run by scripts/node-image.sh in a container of the node base image, with
# kube-proxy's rootfs directory mounted at OUT: copies iptables (nft and
# legacy), nft and conntrack into OUT with their shared libraries and
# xtables modules, and checks each runs there.
#
# Usage: kube-proxy-rootfs.sh OUT
# As it ran before it was a file: -e and -u, without pipefail (ldd fails
# on a module it cannot read and the list is still what is needed).
set -eu
out="${1:?usage: kube-proxy-rootfs.sh OUT}"
# Debian has a merged /usr: keep that layout, copy every path by its
# /usr name, and every symlink together with what it points to.
for d in bin sbin lib lib64; do ln -s "usr/${d}" "${out}/${d}"; done
mkdir -p "${out}/usr/bin" "${out}/usr/sbin" "${out}/usr/lib" "${out}/usr/lib64"
canon() { printf "%s/%s\n" "$(readlink -f "$(dirname "$1")")" "$(basename "$1")"; }
files=(/usr/sbin/xtables-nft-multi /usr/sbin/xtables-legacy-multi /usr/sbin/nft /usr/sbin/conntrack)
links=$(find /usr/sbin /etc/alternatives -maxdepth 1 -type l \( -name "ip*tables*" -o -name "ebtables*" -o -name "arptables*" \))
# the xtables match/target modules are loaded at run time: their
# libraries too (libxt_statistic needs libm, for Services with more
# than one endpoint).
libs=$(ldd "${files[@]}" /usr/lib/x86_64-linux-gnu/xtables/*.so | awk '/=>/ {print $3} /ld-linux/ {print $1}' | sort -u)
for f in "${files[@]}" ${links} ${libs} /usr/lib/x86_64-linux-gnu/xtables /etc/ethertypes /etc/protocols /etc/services; do
	[ -e "$f" ] || [ -L "$f" ] || continue
	c="$(canon "$f")"
	cp -a --parents "$c" "${out}/"
	[ -L "$c" ] && cp -a --parents "$(readlink -f "$c")" "${out}/"
done
mkdir -p "${out}/run" "${out}/var/run" "${out}/var/lib/kube-proxy"
chroot "${out}" /usr/sbin/iptables-nft --version >/dev/null
chroot "${out}" /usr/sbin/nft --version >/dev/null
chroot "${out}" /usr/sbin/conntrack --version >/dev/null
missing=$(for m in "${out}/usr/lib/x86_64-linux-gnu/xtables/"*.so; do chroot "${out}" /usr/lib64/ld-linux-x86-64.so.2 --list "${m#"${out}"}" 2>&1 | grep "not found" || true; done)
[ -z "${missing}" ] || { echo "kube-proxy rootfs: xtables modules miss libraries: ${missing}" >&2; exit 1; }


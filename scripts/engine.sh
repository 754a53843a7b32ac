#!/usr/bin/env bash
# The project's own Docker engine, for kind: dockerd (moby) with its managed
# containerd and runc, all built from source by build-components.sh. It needs
# no runc wrapper on hosts whose root lacks CAP_SYS_RESOURCE (moby >= 23 only
# asks runc for the capabilities the host has).
#
# It runs in the background with its own data root, exec root, socket,
# cgroup parent and nftables tables, and never uses a Docker engine the host
# already runs:
#   socket     /run/evictkit/docker.sock   (DOCKER_HOST for every script)
#   data root  ${EVICTKIT_STATE_DIR:-/var/lib/evictkit}/docker (outlives the
#              checkout, so built images stay cached between clones)
#   cgroups    /sys/fs/cgroup/<controller>/evictkit/...
#   log        _output/logs/dockerd.log
#
# Usage: scripts/engine.sh up|down|status|env
#   up      start it unless it already runs (idempotent); prints nothing else
#   down    stop it if this project started it, and remove what it left behind
#           (its cgroups, its nftables tables, its exec root); idempotent
#   status  exit 0 when it answers
#   env     print `export DOCKER_HOST=...` for eval
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/steps.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/engine-env.sh"

root="$(repo_root)"
bin="${root}/_output/bin"
logs="${root}/_output/logs"

running() { [[ -S "${EVICTKIT_DOCKER_SOCK}" ]] && docker version >/dev/null 2>&1; }

engine_pid() {
	local pid
	pid="$(cat "${EVICTKIT_RUN_DIR}/dockerd.pid" 2>/dev/null || true)"
	[[ -n "${pid}" && -d "/proc/${pid}" ]] && [[ "$(cat "/proc/${pid}/comm" 2>/dev/null)" == dockerd ]] && printf '%s' "${pid}"
}

up() {
	if running; then
		note "engine: already running (${DOCKER_HOST})"
		return
	fi
	require_cmd docker "the Docker CLI is expected at /usr/local/bin/docker"
	require_cmd nft "apt-get install nftables (dockerd uses its nftables firewall backend)"
	for b in dockerd docker-proxy containerd containerd-shim-runc-v2 runc; do
		[[ -x "${bin}/${b}" ]] || die "${bin}/${b} is missing" "run: scripts/build-components.sh"
	done
	mkdir -p "${EVICTKIT_RUN_DIR}" "${EVICTKIT_DOCKER_ROOT}" "${logs}"
	step "engine: starting dockerd ${DOCKER_HOST}, data root ${EVICTKIT_DOCKER_ROOT}"
	local start=${SECONDS}
	# --ip-forward=false: the engine leaves the host's ip_forward sysctl
	# alone; kind's nodes share one bridge (no routing needed) and nothing
	# outside this host is reachable anyway.
	# setsid: the engine outlives the make that started it; PATH: dockerd
	# finds containerd, the shim, runc and docker-proxy next to itself.
	PATH="${bin}:${PATH}" setsid "${bin}/dockerd" \
		--host "${DOCKER_HOST}" \
		--data-root "${EVICTKIT_DOCKER_ROOT}" \
		--exec-root "${EVICTKIT_RUN_DIR}/exec" \
		--pidfile "${EVICTKIT_RUN_DIR}/dockerd.pid" \
		--cgroup-parent /evictkit \
		--exec-opt native.cgroupdriver=cgroupfs \
		--firewall-backend nftables \
		--bridge none \
		--ip-forward=false \
		--storage-driver overlay2 \
		--log-level warn \
		</dev/null >>"${logs}/dockerd.log" 2>&1 &
	local i
	for ((i = 0; i < 120; i++)); do
		running && break
		if ! kill -0 $! 2>/dev/null; then
			tail -n 20 "${logs}/dockerd.log" >&2
			die "dockerd exited while starting" "see ${logs}/dockerd.log"
		fi
		sleep 0.5
	done
	running || die "dockerd did not answer on ${DOCKER_HOST} within 60 s" "see ${logs}/dockerd.log"
	touch "${EVICTKIT_RUN_DIR}/started-by-evictkit"
	note "engine: up in $((SECONDS - start)) s ($(docker version --format '{{.Server.Version}}'))"
}

down() {
	local pid
	pid="$(engine_pid || true)"
	if [[ -z "${pid}" ]]; then
		note "engine: not running"
	elif [[ ! -f "${EVICTKIT_RUN_DIR}/started-by-evictkit" ]]; then
		note "engine: pid ${pid} was not started by these scripts; leaving it alone"
		return
	else
		step "engine: stopping dockerd (pid ${pid})"
		kill -TERM "${pid}"
		local i
		for ((i = 0; i < 60; i++)); do
			[[ -d "/proc/${pid}" ]] || break
			sleep 0.5
		done
		[[ -d "/proc/${pid}" ]] && die "dockerd (pid ${pid}) did not stop within 30 s" "see ${logs}/dockerd.log"
	fi
	# What our dockerd creates and does not remove on exit.
	local t
	for t in "ip docker-bridges" "ip6 docker-bridges"; do
		# shellcheck disable=SC2086
		nft list table ${t} >/dev/null 2>&1 && nft delete table ${t}
	done
	local d
	for d in /sys/fs/cgroup/*/evictkit /sys/fs/cgroup/unified/evictkit; do
		[[ -d "${d}" ]] || continue
		find "${d}" -depth -type d -exec rmdir {} + 2>/dev/null || true
	done
	if [[ -d "${EVICTKIT_RUN_DIR}/exec" ]]; then
		grep -q " ${EVICTKIT_RUN_DIR}/exec" /proc/self/mountinfo &&
			awk -v p="${EVICTKIT_RUN_DIR}/exec" '$5 ~ "^"p {print $5}' /proc/self/mountinfo | sort -r | xargs -r umount -l
		rm -rf "${EVICTKIT_RUN_DIR}/exec"
	fi
	rm -f "${EVICTKIT_RUN_DIR}/started-by-evictkit" "${EVICTKIT_RUN_DIR}/dockerd.pid"
	note "engine: down"
}

case "${1:-}" in
up) up ;;
down) down ;;
status) running ;;
env) printf 'export DOCKER_HOST=%q\n' "${DOCKER_HOST}" ;;
*) die "usage: scripts/engine.sh up|down|status|env" ;;
esac

# Where the project's Docker engine lives (see engine.sh). Sourced, not run:
# every script that talks to Docker sources this, so none of them ever uses
# another engine by accident.
# shellcheck shell=bash

EVICTKIT_STATE_DIR="${EVICTKIT_STATE_DIR:-/var/lib/evictkit}"
EVICTKIT_RUN_DIR="/run/evictkit"
EVICTKIT_DOCKER_ROOT="${EVICTKIT_STATE_DIR}/docker"
EVICTKIT_DOCKER_SOCK="${EVICTKIT_RUN_DIR}/docker.sock"
export DOCKER_HOST="unix://${EVICTKIT_DOCKER_SOCK}"
# kind and the docker CLI must not pick up a context that points elsewhere.
export DOCKER_CONTEXT=default

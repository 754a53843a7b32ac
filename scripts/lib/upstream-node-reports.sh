# Where make test-upstream-node leaves a run's reports. Sourced, not run.
# shellcheck shell=bash

# upstream_node_key FOCUS SKIP: the key in the names of a run's reports,
# <kubelet>-<key>-pass<N>.xml (and -kubelet.log): a hash of the focus and
# skip, so that runs of different specs keep each other's reports.
upstream_node_key() {
	printf '%s\n%s\n' "$1" "$2" | sha256sum | cut -c1-8
}

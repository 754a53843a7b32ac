# What scripts/test-node.sh and scripts/test-e2e.sh share: the kubelet
# switch of the nodes a suite uses and the runs of a Ginkgo suite. Sourced
# after steps.sh, not run.
# shellcheck shell=bash

# suite_use_kubelet ROOT CLUSTER KUBECONFIG KUBELET NODE...: every NODE runs
# KUBELET for the rest of the script. For upstream, the nodes are switched
# now and back to ours when the script exits (however it exits).
suite_use_kubelet() {
	local root="$1" cluster="$2" kubeconfig="$3" kubelet="$4"
	shift 4
	case "${kubelet}" in
	evictkit) return 0 ;;
	upstream) ;;
	*) die "KUBELET=${kubelet}: want evictkit or upstream" ;;
	esac
	_suite_switch_args=("${root}" "${cluster}" "${kubeconfig}" "$@")
	trap '_suite_switch evictkit || exit 1' EXIT
	_suite_switch upstream
}

# _suite_switch KUBELET: the nodes saved by suite_use_kubelet run KUBELET.
_suite_switch() {
	local root="${_suite_switch_args[0]}" cluster="${_suite_switch_args[1]}" kubeconfig="${_suite_switch_args[2]}"
	local tool="${root}/_output/bin/evictkit-cluster" n rc=0
	(cd "${root}" && go build -trimpath -o "${tool}" ./cmd/evictkit-cluster)
	for n in "${_suite_switch_args[@]:3}"; do
		"${tool}" -name "${cluster}" -kubeconfig "${kubeconfig}" kubelet "${n}" "$1" || {
			echo "error: node ${n} was not switched to the ${1} kubelet (scripts/cluster.sh kubelet ${n} ${1})" >&2
			rc=1
		}
	done
	return "${rc}"
}

# suite_run ROOT NAME PACKAGE REPORT REPEAT LABELS [SUITE FLAG...]: runs the
# Ginkgo suite in PACKAGE REPEAT+1 times (each pass a fresh test process;
# stops at the first failing pass) with the label filter LABELS (all specs
# when empty), writing JUnit to REPORT.xml and Ginkgo's JSON report (which
# make e2e summarizes) to REPORT.json. Returns the suite's status. Each pass
# may take SUITE_MINUTES (default 95).
suite_run() {
	local root="$1" name="$2" pkg="$3" report="$4" repeat="$5" labels="$6"
	shift 6
	[[ "${repeat}" =~ ^[0-9]+$ ]] || die "REPEAT=${repeat}: want a number of extra passes (0 or more)"
	local color=() rc=0 pass start=${SECONDS} result minutes="${SUITE_MINUTES:-95}"
	[[ "${minutes}" =~ ^[1-9][0-9]*$ ]] || die "SUITE_MINUTES=${minutes}: want a number of minutes"
	[[ -t 1 ]] || color=(-ginkgo.no-color)
	mkdir -p "$(dirname "${report}")"
	for ((pass = 0; pass <= repeat; pass++)); do
		((repeat == 0)) || step "${name}: pass $((pass + 1)) of $((repeat + 1))"
		(cd "${root}" && go test "${pkg}" -count=1 -v -timeout "$((minutes + 5))m" -args "$@" \
			-ginkgo.v "${color[@]}" -ginkgo.timeout "${minutes}m" -ginkgo.junit-report "${report}.xml" -ginkgo.json-report "${report}.json" \
			${labels:+-ginkgo.label-filter "${labels}"}) || rc=$?
		((rc == 0)) || break
	done
	result="passed"
	((rc == 0)) || result="FAILED"
	((repeat == 0)) || result+=" (pass $((rc == 0 ? repeat + 1 : pass + 1)) of $((repeat + 1)))"
	step "${name}: ${result} in $((SECONDS - start)) s (reports ${report#"${root}"/}.{xml,json}, of the last pass)"
	return "${rc}"
}

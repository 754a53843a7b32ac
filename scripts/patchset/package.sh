# Sourced by the patch definitions: copies evictkit's eviction package into
# the kubernetes tree with the features a patch has reached.
#
# copy_package [FEATURE] puts evictkit's package as of FEATURE into
# pkg/kubelet/eviction: the features of features_in_order up to and
# including it (none without FEATURE). Once wired is reached it replaces
# the package (all but the api/ sub-package); before, the decision core
# goes beside upstream's files, replacing only those that a feature
# reached lists in upstream_replaced. Code that belongs to a feature
# carries markers, removed on the way:
#
#   //evictkit:file FEATURE     first line: the whole file is FEATURE's
#                               (# evictkit:file FEATURE in a scenario file)
#   //evictkit:begin FEATURE    these lines are FEATURE's ...
#   //evictkit:end FEATURE      ... up to here (blocks do not nest)
#
# A feature not reached is left out: its files are not copied and its
# blocks are cut. So the first patches add the core beside upstream's
# code a part at a time, the next puts the manager on it (upstream's
# behaviour, with the fixed rules of the README) and each later patch
# adds one feature's code. A marker that is not exactly one of these (a
# space after //, an unknown feature, a block left open) is an error,
# never a comment.
: "${EVICTKIT:?EVICTKIT must name the evictkit checkout}"
source "${EVICTKIT}/scripts/lib/versions.sh"
# The minor version feature gates are introduced at: this fork's base, or
# the release make rebase generates the series on (SERIES_K8S_VERSION).
K8S_MINOR="$(sed -E 's/^v([0-9]+\.[0-9]+)\..*/\1/' <<<"${SERIES_K8S_VERSION:-${K8S_VERSION}}")"

# The features, in the order the series adds them: the one list that the
# patch definitions, the marker checks and the stage tests go by. A feature
# is a commit's share of the package after the base (the threshold
# evaluation, added beside upstream's files): ranking (filesystem layouts,
# pod usage, ranking, local storage limits) and decision (one pass's
# decision, messages, admission), still beside upstream's files; notifier
# (the memcg threshold notifier, in place of upstream's, under upstream's
# manager); wired (the manager on the core, in place of upstream's
# files); fuzz (the fuzz targets, their reference model and corpora);
# then the alpha gates. Before wired, the core uses upstream's definitions
# of the few names both packages define alike (isHardEvictionThreshold,
# resourcePids, ...): ours are in blocks marked wired.
features_in_order=(ranking decision notifier wired fuzz EvictionReclaimSized EvictionFastPath EvictionExplain EvictionDryRun EvictionPSI EvictionCgroupV2Notifier EvictionSoftGraceTimer EvictionNegativeMaxPodGraceDefers EvictionNodeFsReclaim EvictionHardDuringSoft EvictionReclaimableMemory EvictionResumeAfterRestart EvictionDiskFastPath EvictionKillWithoutGrace)

# FEATURE:FILE,...: the upstream files of the package that FEATURE, reached
# before wired, removes (its own files take their place). Any other file
# of ours with the name of one of upstream's is an error before wired.
upstream_replaced=(
	notifier:memory_threshold_notifier.go,memory_threshold_notifier_others.go,memory_threshold_notifier_test.go,memory_threshold_notifier_windows.go,threshold_notifier_linux.go,threshold_notifier_unsupported.go
)

# Test data that is neither Go nor a scenario file carries no marker: it
# belongs to the feature of the first PREFIX:FEATURE here that its path
# (in the package) starts with, and to the base when none matches.
data_features=(testdata/fuzz/:fuzz)

# feature_enabled FEATURE: whether FEATURE is among enabled_features.
feature_enabled() { [[ " ${enabled_features} " == *" $1 "* ]]; }

# series_base: the commit of the kubernetes tree the series starts from
# (scripts/patches.sh tags upstream's pristine tree so).
series_base="${SERIES_BASE:-evictkit-base}"

# replaced_upstream_files: prints the upstream files (names in the
# package) that the enabled features replace before wired, one per line;
# fails on an entry of upstream_replaced that names an unknown feature.
replaced_upstream_files() {
	local entry feature
	for entry in "${upstream_replaced[@]}"; do
		feature="${entry%%:*}"
		[[ " ${features_in_order[*]} " == *" ${feature} "* ]] ||
			{ echo "upstream_replaced: ${entry%%,*}... names unknown feature ${feature} (known: ${features_in_order[*]})" >&2; return 1; }
		! feature_enabled "${feature}" || tr ',' '\n' <<<"${entry#*:}"
	done
}

# data_feature PATH: prints the feature PATH belongs to (nothing: the
# base); fails on a table entry that names an unknown feature.
data_feature() {
	local entry prefix feature
	for entry in "${data_features[@]}"; do
		prefix="${entry%%:*}" feature="${entry#*:}"
		[[ " ${features_in_order[*]} " == *" ${feature} "* ]] ||
			{ echo "data_features: ${entry} names unknown feature ${feature} (known: ${features_in_order[*]})" >&2; return 1; }
		if [[ "$1" == "${prefix}"* ]]; then
			echo "${feature}"
			return 0
		fi
	done
}

# features_through [FEATURE]: prints the features up to and including
# FEATURE, space-separated (nothing without FEATURE); fails on a name not
# in features_in_order.
features_through() {
	local want="${1:-}" f out=""
	[[ -n "${want}" ]] || return 0
	for f in "${features_in_order[@]}"; do
		out+="${out:+ }${f}"
		if [[ "${f}" == "${want}" ]]; then
			echo "${out}"
			return 0
		fi
	done
	echo "unknown feature ${want} (known, in order: ${features_in_order[*]})" >&2
	return 1
}

# marker_awk: what both marker filters start with: on[] (the enabled
# features, FEATURES), known[] (KNOWN) and fail(), which names file and line.
marker_awk='
		BEGIN {
			n = split(ENVIRON["FEATURES"], f, " ")
			for (i = 1; i <= n; i++) on[f[i]] = 1
			n = split(ENVIRON["KNOWN"], f, " ")
			for (i = 1; i <= n; i++) known[f[i]] = 1
		}
		function fail(msg) { printf "%s:%d: %s\n", FILENAME, FNR, msg > "/dev/stderr"; bad = 1; exit 1 }
'

# strip_features FILE: prints FILE as of the enabled features (FEATURES,
# space-separated), or nothing when the whole file belongs to another.
# Fails, naming the file and line, on any malformed marker.
strip_features() {
	FEATURES="${enabled_features}" KNOWN="${features_in_order[*]}" awk "${marker_awk}"'
		function feature(name, marker) {
			if (name == "") fail(marker " without a feature")
			if (!(name in known)) fail(marker " names unknown feature " name " (known: " ENVIRON["KNOWN"] ")")
			if (NF > 2) fail(marker " " name ": text after the feature")
			return name
		}
		# Anything that looks like a marker must be one, exactly.
		/^[ \t]*\/\/[ \t]+evictkit:/ { fail("marker with a space after //: " $0) }
		/\/\/evictkit:/ && $1 !~ /^\/\/evictkit:(file|begin|end)$/ { fail("not a marker (//evictkit:file, begin or end at the start of a line): " $0) }
		FNR == 1 && $1 == "//evictkit:file" {
			if (!(feature($2, "//evictkit:file") in on)) { skipfile = 1; exit 0 }
			dropblank = 1
			next
		}
		dropblank { dropblank = 0; if ($0 == "") next }
		$1 == "//evictkit:file" { fail("//evictkit:file must be the first line") }
		$1 == "//evictkit:begin" {
			if (block != "") fail("//evictkit:begin " $2 " inside the block of " block)
			block = feature($2, "//evictkit:begin"); cut = !(block in on)
			next
		}
		$1 == "//evictkit:end" {
			if (block == "" || $2 != block) fail("//evictkit:end " $2 " does not close " (block == "" ? "a block" : block))
			block = ""; cut = 0
			next
		}
		!cut { print }
		END {
			if (bad) exit 1
			if (block != "") { printf "%s: block of %s not closed\n", FILENAME, block > "/dev/stderr"; exit 1 }
		}
	' "$1"
}

# strip_scenario_feature FILE: prints a scenario file (testdata/scenarios)
# without its "# evictkit:file FEATURE" first line, or nothing when FEATURE
# is not enabled.
strip_scenario_feature() {
	FEATURES="${enabled_features}" KNOWN="${features_in_order[*]}" awk "${marker_awk}"'
		FNR == 1 && $1 == "#" && $2 == "evictkit:file" {
			if (!($3 in known)) fail("# evictkit:file names unknown feature " $3 " (known: " ENVIRON["KNOWN"] ")")
			if (!($3 in on)) exit 0
			dropblank = 1
			next
		}
		dropblank { dropblank = 0; if ($0 == "") next }
		/evictkit:/ { fail("# evictkit:file FEATURE must be the first line, and is the only marker of a scenario file") }
		{ print }
		END { if (bad) exit 1 }
	' "$1"
}

# cut_package DEST: writes evictkit's eviction package (the files git
# tracks, all but api/) into DEST as of the enabled features
# (enabled_features): Go files and scenario files cut, other test data
# copied once its feature (data_features) is reached. copy_package and
# scripts/stage-tests.sh use it.
cut_package() {
	local dest="$1" src="${EVICTKIT}/pkg/kubelet/eviction" f out feature
	while IFS= read -r f; do
		[[ -f "${src}/${f}" ]] || continue
		case "${f}" in api/*) continue ;; esac
		case "${f}" in
		*.go) out="$(strip_features "${src}/${f}")" || return 1 ;;
		testdata/scenarios/*) out="$(strip_scenario_feature "${src}/${f}")" || return 1 ;;
		*)
			feature="$(data_feature "${f}")" || return 1
			if [[ -z "${feature}" ]] || feature_enabled "${feature}"; then
				mkdir -p "${dest}/$(dirname "${f}")"
				cp "${src}/${f}" "${dest}/${f}"
			fi
			continue
			;;
		esac
		mkdir -p "${dest}/$(dirname "${f}")"
		[[ -z "${out}" ]] || printf '%s\n' "${out}" >"${dest}/${f}"
	done < <(git -C "${EVICTKIT}" ls-files --cached -- pkg/kubelet/eviction |
		sed 's#^pkg/kubelet/eviction/##')
}

# copy_package [FEATURE]: see the top of this file. Before wired a file of
# ours with the name of one of upstream's is an error, unless
# upstream_replaced lists it for a feature reached.
copy_package() {
	[[ $# -le 1 ]] || { echo "copy_package: at most one feature, the last one the patch reaches (got: $*)" >&2; return 1; }
	local enabled_features
	enabled_features="$(features_through "${1:-}")" || return 1
	local dest=pkg/kubelet/eviction

	# Only what git tracks goes into a patch: a new file is added first.
	local untracked
	untracked="$(git -C "${EVICTKIT}" ls-files --others --exclude-standard -- pkg/kubelet/eviction)"
	if [[ -n "${untracked}" ]]; then
		echo "copy_package: files in pkg/kubelet/eviction that git does not track (git add them, or remove them):" >&2
		echo "${untracked}" >&2
		return 1
	fi

	if feature_enabled wired; then
		# Remove every upstream file of the package itself; api/ stays upstream's.
		find "${dest}" -mindepth 1 -maxdepth 1 ! -name api -exec git rm -r -q --cached --ignore-unmatch {} +
		find "${dest}" -mindepth 1 -maxdepth 1 ! -name api -exec rm -rf {} +
		cut_package "${dest}" || return 1
	else
		# Before wired: the core goes beside upstream's files, replacing
		# only those that a feature reached lists in upstream_replaced.
		local cut f replaced upstream_files clash=()
		replaced="$(replaced_upstream_files)" || return 1
		upstream_files="$(git ls-tree --name-only "${series_base}" -- "${dest}/" | sed "s#^${dest}/##")" ||
			{ echo "copy_package: cannot list upstream's files at ${series_base}" >&2; return 1; }
		for f in ${replaced}; do
			grep -q -x -F "${f}" <<<"${upstream_files}" ||
				{ echo "copy_package: upstream_replaced names ${f}, which upstream's package does not have" >&2; return 1; }
			git rm -q --ignore-unmatch "${dest}/${f}"
		done
		cut="$(mktemp -d)"
		cut_package "${cut}" || { rm -rf "${cut}"; return 1; }
		while IFS= read -r f; do
			if grep -q -x -F "${f}" <<<"${upstream_files}" && ! grep -q -x -F "${f}" <<<"${replaced}"; then
				clash+=("${f}")
			fi
		done < <(cd "${cut}" && find . -type f | sed 's#^\./##' | sort)
		if [[ ${#clash[@]} -gt 0 ]]; then
			echo "copy_package: before wired these would replace upstream's files (mark them //evictkit:file wired, or list them in upstream_replaced): ${clash[*]}" >&2
			rm -rf "${cut}"
			return 1
		fi
		cp -r "${cut}/." "${dest}/"
		rm -rf "${cut}"
	fi

	# Our module path becomes upstream's, should the package ever import a
	# sub-package of its own.
	{ grep -rl 'github.com/evictkit/evictkit/' "${dest}" --include='*.go' || true; } |
		xargs -r sed -i 's#github.com/evictkit/evictkit/#k8s.io/kubernetes/#g'

	add_boilerplate "${dest}"
	# Cutting a block can leave a struct's fields out of alignment.
	gofmt -w "${dest}"
	git add -A -f "${dest}"
}

# add_boilerplate DIR: every Go file in DIR carries the license boilerplate
# upstream's verify scripts expect, after the build constraint if there is
# one (where gofmt wants it).
add_boilerplate() {
	local dir="$1" f
	for f in $(find "${dir}" -maxdepth 1 -name '*.go' | sort); do
		add_file_boilerplate "${f}"
	done
}

# add_file_boilerplate FILE: the same for one Go file.
add_file_boilerplate() {
	local f="$1"
	if grep -q 'Copyright' <<<"$(head -n 5 "${f}")"; then
		return 0
	fi
	if [[ "$(head -n 1 "${f}")" == "//go:build "* ]]; then
		{ head -n 1 "${f}"; echo; boilerplate; tail -n +2 "${f}" | sed '1{/^$/d}'; } >"${f}.new"
	else
		{ boilerplate; cat "${f}"; } >"${f}.new"
	fi
	mv "${f}.new" "${f}"
}

boilerplate() {
	local year=2026
	printf '/*\nCopyright %s The Kubernetes Authors.\n\n' "${year}"
	printf 'Licensed under the Apache License, Version 2.0 (the "License");\n'
	printf 'you may not use this file except in compliance with the License.\n'
	printf 'You may obtain a copy of the License at\n\n'
	printf '    http://www.apache.org/licenses/LICENSE-2.0\n\n'
	printf 'Unless required by applicable law or agreed to in writing, software\n'
	printf 'distributed under the License is distributed on an "AS IS" BASIS,\n'
	printf 'WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.\n'
	printf 'See the License for the specific language governing permissions and\n'
	printf 'limitations under the License.\n*/\n\n'
}

# add_feature_gate NAME STAGE DEFAULT COMMENT: declares a kubelet feature
# gate in pkg/features/kube_features.go the way upstream does: its
# constant (with COMMENT, one line per line, above it), its versioned
# spec (at Kubernetes ${K8S_MINOR}, STAGE Alpha|Beta, DEFAULT true|false)
# and an empty dependency list, each in alphabetical place, then updates
# the generated feature lists under test/compatibility_lifecycle with
# upstream's own tools (hack/update-featuregates.sh's two commands).
add_feature_gate() {
	local name="$1" stage="$2" default="$3" comment="$4"
	local file=pkg/features/kube_features.go
	[[ -f "${file}" ]] || { echo "add_feature_gate: ${file} not found" >&2; return 1; }
	LC_ALL=C NAME="${name}" STAGE="${stage}" DEFAULT="${default}" COMMENT="${comment}" MINOR="${K8S_MINOR}" awk '
		BEGIN {
			name = ENVIRON["NAME"]
			nc = split(ENVIRON["COMMENT"], c, "\n")
		}
		{ line[NR] = $0 }
		END {
			# Section 1: the constants; section 2: the versioned specs;
			# section 3: the dependencies.
			for (i = 1; i <= NR; i++) {
				if (line[i] ~ /^var defaultVersionedKubernetesFeatureGates /) sec = 2
				else if (line[i] ~ /^var defaultKubernetesFeatureGateDependencies /) sec = 3
				if (at[1] == "" && sec == 0 && match(line[i], /^\t[A-Z][A-Za-z0-9]* featuregate\.Feature = "/)) {
					n = substr(line[i], 2, index(line[i], " ") - 2)
					if (n == name) { print "add_feature_gate: " name " is already declared" > "/dev/stderr"; exit 1 }
					if (n > name) {
						j = i
						while (line[j - 1] ~ /^\t\/\//) j--
						at[1] = j
					}
				}
				if (at[sec] == "" && sec >= 2 && match(line[i], /^\t[A-Z][A-Za-z0-9]*: \{/)) {
					n = substr(line[i], 2, index(line[i], ":") - 2)
					if (n > name) at[sec] = i
				}
			}
			for (s = 1; s <= 3; s++) if (at[s] == "") { print "add_feature_gate: no place found in section " s > "/dev/stderr"; exit 1 }
			for (i = 1; i <= NR; i++) {
				if (i == at[1]) {
					for (k = 1; k <= nc; k++) print (c[k] == "" ? "\t//" : "\t// " c[k])
					printf "\t%s featuregate.Feature = \"%s\"\n\n", name, name
				}
				if (i == at[2]) {
					printf "\t%s: {\n", name
					printf "\t\t{Version: version.MustParse(\"%s\"), Default: %s, PreRelease: featuregate.%s},\n", ENVIRON["MINOR"], ENVIRON["DEFAULT"], ENVIRON["STAGE"]
					printf "\t},\n\n"
				}
				if (i == at[3]) printf "\t%s: {},\n\n", name
				print line[i]
			}
		}
	' "${file}" >"${file}.new" || { rm -f "${file}.new"; return 1; }
	mv "${file}.new" "${file}"
	if [[ -n "$(gofmt -l "${file}")" ]]; then
		echo "add_feature_gate: ${file} is not gofmt-clean after the edit" >&2
		return 1
	fi
	# The generated lists. upstream's hack/update-featuregates.sh rewrites
	# versioned_feature_list.yaml from the sources of pkg/ and staging/,
	# which a module-proxy tree lacks, so the entry goes in by hand in the
	# tool's format and order; feature_list.md comes from upstream's
	# generator, which reads the registered gates.
	local list=test/compatibility_lifecycle/reference/versioned_feature_list.yaml
	LC_ALL=C NAME="${name}" STAGE="${stage}" DEFAULT="${default}" MINOR="${K8S_MINOR}" awk '
		function entry() {
			printf "- name: %s\n  versionedSpecs:\n  - default: %s\n    lockToDefault: false\n    preRelease: %s\n    version: \"%s\"\n",
				ENVIRON["NAME"], ENVIRON["DEFAULT"], ENVIRON["STAGE"], ENVIRON["MINOR"]
		}
		/^- name: / && !done && substr($0, 9) > ENVIRON["NAME"] { entry(); done = 1 }
		{ print }
		END { if (!done) entry() }
	' "${list}" >"${list}.new" || { rm -f "${list}.new"; return 1; }
	mv "${list}.new" "${list}"
	GOFLAGS=-trimpath go run cmd/genfeaturegates/genfeaturegates.go -output=test/compatibility_lifecycle/reference/feature_list.md >/dev/null
	git add "${file}" test/compatibility_lifecycle/reference
}

# set_feature_dependencies NAME DEP...: makes the gates NAME depends on
# DEP... in pkg/features/kube_features.go's dependency list (it must be
# empty before), then regenerates feature_list.md, whose table shows them,
# with upstream's generator.
set_feature_dependencies() {
	local name="$1" file=pkg/features/kube_features.go deps
	shift
	deps="$(printf '%s, ' "$@")"
	deps="${deps%, }"
	[[ -n "${deps}" ]] || { echo "set_feature_dependencies: no dependency given for ${name}" >&2; return 1; }
	grep -q -x "	${name}: {}," "${file}" ||
		{ echo "set_feature_dependencies: ${file} has no empty dependency list for ${name}" >&2; return 1; }
	sed -i "s/^	${name}: {},\$/	${name}: {${deps}},/" "${file}"
	GOFLAGS=-trimpath go run cmd/genfeaturegates/genfeaturegates.go -output=test/compatibility_lifecycle/reference/feature_list.md >/dev/null
	git add "${file}" test/compatibility_lifecycle/reference
}

# copy_files PATH...: copies each of evictkit's files at PATH (relative to
# both trees, outside the eviction package) into the kubernetes tree, with
# upstream's module path and the license boilerplate; Go files lose their
# markers as copy_package's do, with every feature reached (copy_files
# serves the patches after the package's features).
copy_files() {
	local f out enabled_features="${features_in_order[*]}"
	for f in "$@"; do
		[[ -f "${EVICTKIT}/${f}" ]] || { echo "copy_files: ${EVICTKIT}/${f} not found" >&2; return 1; }
		[[ ! -e "${f}" ]] || { echo "copy_files: ${f} already exists upstream" >&2; return 1; }
		if [[ "${f}" == *.go ]]; then
			out="$(strip_features "${EVICTKIT}/${f}")" || return 1
			printf '%s\n' "${out}" | sed 's#github.com/evictkit/evictkit/#k8s.io/kubernetes/#g' >"${f}"
			add_file_boilerplate "${f}"
		else
			sed 's#github.com/evictkit/evictkit/#k8s.io/kubernetes/#g' "${EVICTKIT}/${f}" >"${f}"
		fi
		git add -f "${f}"
	done
}

# copy_tree_files PATH...: copies each of evictkit's files at _tree/PATH
# into the kubernetes tree at PATH, with the license boilerplate. _tree
# holds code and tests that go into upstream packages a patch edits: they
# use those packages' unexported names and test helpers, so they build
# only in the kubernetes tree (the go command leaves directories named _*
# out of evictkit's module).
copy_tree_files() {
	local f
	for f in "$@"; do
		[[ -f "${EVICTKIT}/_tree/${f}" ]] || { echo "copy_tree_files: ${EVICTKIT}/_tree/${f} not found" >&2; return 1; }
		[[ ! -e "${f}" ]] || { echo "copy_tree_files: ${f} already exists upstream" >&2; return 1; }
		cp "${EVICTKIT}/_tree/${f}" "${f}"
		[[ "${f}" != *.go ]] || add_file_boilerplate "${f}"
		git add -f "${f}"
	done
}

# replace_once FILE OLD NEW: replaces the text OLD (several lines may be)
# in FILE by NEW; fails unless OLD occurs exactly once, so an upstream
# change under an edit is caught, not silently skipped.
replace_once() {
	local file="$1"
	[[ -f "${file}" ]] || { echo "replace_once: ${file} not found" >&2; return 1; }
	OLD="$2" NEW="$3" awk '
		{ text = text $0 "\n" }
		END {
			old = ENVIRON["OLD"]; new = ENVIRON["NEW"]
			i = index(text, old)
			if (i == 0) { print "replace_once: text not found in " FILENAME ":\n" old > "/dev/stderr"; exit 1 }
			rest = substr(text, i + length(old))
			if (index(rest, old) > 0) { print "replace_once: text found more than once in " FILENAME ":\n" old > "/dev/stderr"; exit 1 }
			printf "%s%s%s", substr(text, 1, i - 1), new, rest
		}
	' "${file}" >"${file}.new" || { rm -f "${file}.new"; return 1; }
	mv "${file}.new" "${file}"
	if [[ "${file}" == *.go && -n "$(gofmt -l "${file}")" ]]; then
		echo "replace_once: ${file} is not gofmt-clean after the edit" >&2
		return 1
	fi
	git add "${file}"
}

# Checks of the patch series that upstream reviewers would make; sourced
# by scripts/patches.sh, tested by generator_test.go. Each prints what is
# wrong to stderr and returns 1.

# check_messages DIR: every commit message file (DIR/NNNN-*.msg) has a
# subject of at most 72 characters naming its area ("kubelet/eviction:
# ..."), a blank second line and a body wrapped at 72.
check_messages() {
	local msg bad=0
	for msg in "$1"/[0-9][0-9][0-9][0-9]-*.msg; do
		[[ -f "${msg}" ]] || { echo "no commit message files in $1" >&2; return 1; }
		awk -v f="$(basename "${msg}")" '
			NR == 1 && length($0) > 72 { printf "%s: subject is %d characters (at most 72): %s\n", f, length($0), $0; bad = 1 }
			NR == 1 && $0 !~ /^[a-z0-9.\/-]+: [^ ]/ { printf "%s: subject does not start with its area (\"kubelet/eviction: ...\"): %s\n", f, $0; bad = 1 }
			NR == 2 && $0 != "" { printf "%s: line 2 is not blank\n", f; bad = 1 }
			NR > 2 && length($0) > 72 { printf "%s:%d: %d characters (wrap the body at 72)\n", f, NR, length($0); bad = 1 }
			END { exit bad }
		' "${msg}" >&2 || bad=1
	done
	return "${bad}"
}

# check_added_lines DIR: no line a patch in DIR (*.patch) adds names this
# project: the series is upstream code.
check_added_lines() {
	local hits
	hits="$(cd "$1" && grep -n -i -H -E '^\+.*evictkit' -- *.patch | grep -v -E '^[^:]+:[0-9]+:\+\+\+ ' || true)"
	[[ -z "${hits}" ]] && return 0
	printf '%s\n' "${hits}" | sed 's/^/adds a line naming evictkit: /' | head -n 20 >&2
	return 1
}

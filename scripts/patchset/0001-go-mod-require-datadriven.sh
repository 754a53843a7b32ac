#!/usr/bin/env bash
# Patch 0001: the eviction package's scenario tests read their cases with
# github.com/cockroachdb/datadriven. The kubernetes module graph already
# holds it (v1.0.2, through etcd's raft), with its go.sum lines; this
# requires it directly, in go.mod's first require block, at the version
# evictkit's own go.mod pins. Runs inside the kubernetes tree; EVICTKIT
# is the evictkit checkout.
set -euo pipefail

module=github.com/cockroachdb/datadriven
version="$(awk -v m="${module}" '$1 == m {print $2; exit}' "${EVICTKIT}/go.mod")"
[[ -n "${version}" ]] || { echo "evictkit's go.mod does not require ${module}" >&2; exit 1; }
grep -q "^${module} ${version} h1:" go.sum ||
	{ echo "the kubernetes go.sum has no ${module} ${version}: the base changed, pin the version it has" >&2; exit 1; }
grep -q "^	${module} " go.mod && { echo "go.mod already requires ${module}" >&2; exit 1; }

# Insert in sorted position within the first require block (direct
# dependencies), as hack/update-vendor.sh would leave it.
awk -v line="	${module} ${version}" '
	/^require \(/ && !seen { inblock = 1; seen = 1; print; next }
	inblock && !done && ($0 == ")" || $1 > substr(line, 2)) { print line; done = 1 }
	inblock && $0 == ")" { inblock = 0 }
	{ print }
' go.mod >go.mod.new
mv go.mod.new go.mod
grep -q "^	${module} ${version}$" go.mod || { echo "inserting ${module} into go.mod failed" >&2; exit 1; }
git add go.mod

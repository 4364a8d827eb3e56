#!/usr/bin/env bash
# The unit test of deploy/systemd (make systemd-check, part of make test):
# `systemd-analyze verify` on searxgate.service and on the replicas'
# template searxgate@.service (as its instance searxgate@1), in a scratch
# root that holds the units, this host's system units and a searxgate
# binary at the units' ExecStart, and `systemd-analyze security
# --offline=yes` on each, which must stay at or below MAX_EXPOSURE. Nothing is installed or started.
# Without systemd-analyze it skips, saying so; with CI=true it fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
MAX_EXPOSURE=${MAX_EXPOSURE:-1.5}

say() { echo "systemd-check: $*"; }
if ! command -v systemd-analyze >/dev/null 2>&1; then
	if [ "${CI:-}" = true ]; then
		say "FAIL: no systemd-analyze (apt-get install systemd)" >&2
		exit 1
	fi
	say "SKIP: no systemd-analyze (apt-get install systemd)"
	exit 0
fi
units=
for d in /usr/lib/systemd/system /lib/systemd/system; do
	[ -e "$d/multi-user.target" ] && units=$d && break
done
[ -n "$units" ] || { say "FAIL: no system units (multi-user.target) on this host" >&2; exit 1; }

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/usr/lib/systemd" "$root/etc/systemd/system" "$root/usr/local/bin"
cp -a "$units" "$root/usr/lib/systemd/system"
cp deploy/systemd/searxgate.service deploy/systemd/searxgate@.service "$root/etc/systemd/system/"
make --no-print-directory build BIN="$root/usr/local/bin/searxgate" >/dev/null

# check verifies one unit and rates its exposure.
check() {
	local unit=$1 out report score
	if ! out=$(systemd-analyze verify --root="$root" "/etc/systemd/system/$unit" 2>&1) || [ -n "$out" ]; then
		echo "$out" >&2
		say "FAIL: systemd-analyze verify $unit" >&2
		exit 1
	fi
	say "systemd-analyze verify $unit: no complaint"
	report=$(systemd-analyze security --offline=yes --root="$root" "$unit" 2>&1)
	score=$(echo "$report" | sed -n "s/.*Overall exposure level for ${unit//./\\.}: \([0-9.]*\).*/\1/p")
	[ -n "$score" ] || { echo "$report" >&2; say "FAIL: no exposure level in systemd-analyze security's report on $unit" >&2; exit 1; }
	if ! awk -v s="$score" -v m="$MAX_EXPOSURE" 'BEGIN { exit !(s <= m) }'; then
		echo "$report" | grep -v '✓' >&2
		say "FAIL: $unit: exposure $score is above $MAX_EXPOSURE" >&2
		exit 1
	fi
	say "PASS: $unit: systemd-analyze security --offline=yes: exposure $score (at most $MAX_EXPOSURE)"
}
check searxgate.service
check searxgate@1.service

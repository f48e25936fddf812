#!/usr/bin/env bash
# Kernel splats in guest logs (the console first: it holds what a dying
# guest printed last). Used by tests/rt/run-rt.sh on the RT debug kernel.
#
# usage: splat-check.sh LOG...
#
# Prints "SPLAT <line>" once per distinct splat line (timestamps removed)
# and "splats: N" last; exit status 0 only when N is 0 and every LOG exists.
# Caught: lockdep (circular locking, inconsistent lock state, invalid wait
# context = a sleeping lock under a raw one, PROVE_RAW_LOCK_NESTING; bad
# unlock balance, held lock freed, suspicious RCU usage; its internal
# DEBUG_LOCKS_WARN_ON), sleeping in atomic context ("BUG: sleeping function
# called from invalid context", "scheduling while atomic"), UBSAN, any
# "BUG:" (KASAN and KFENCE reports begin with it) or "WARNING:", Oops,
# general protection faults, panics, RCU stalls, hung tasks, soft/hard
# lockups, kmemleak reports.
set -u
[ $# -gt 0 ] || { sed -n '5p' "$0" | sed 's/^# //' >&2; exit 2; }
re='BUG:|WARNING:|possible circular locking|possible recursive locking'
re="$re|inconsistent lock state|Invalid wait context|bad unlock balance"
re="$re|held lock freed|suspicious RCU usage|DEBUG_LOCKS_WARN_ON"
re="$re|sleeping function called from invalid context|scheduling while atomic"
re="$re|UBSAN:|Oops|general protection fault|Kernel panic"
re="$re|rcu: INFO: rcu_.* detected stalls|INFO: task .* blocked for more than"
re="$re|soft lockup|hard LOCKUP|unreferenced object 0x|new suspected memory leak"
missing=0
for f in "$@"; do
	[ -f "$f" ] || { echo "splat-check: no log $f" >&2; missing=1; }
done
splats=$(cat "$@" 2>/dev/null | tr -d '\r' | sed 's/^\[ *[0-9.]*\] //' |
	grep -E "$re" | sort -u)
n=0
if [ -n "$splats" ]; then
	while IFS= read -r l; do
		echo "SPLAT $l"
		n=$((n + 1))
	done <<< "$splats"
fi
echo "splats: $n"
[ "$n" -eq 0 ] && [ "$missing" -eq 0 ]

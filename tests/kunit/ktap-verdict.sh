#!/usr/bin/env bash
# Turn the collected KTAP files and the guest logs into a verdict.
#
# usage: ktap-verdict.sh KTAP_DIR EXPECTED_SUITES_FILE LOG... 
#
# Prints one line per KUnit case ("PASS|FAIL|SKIP suite.case"), one line per
# kernel splat found in the logs, and "N passed, N failed". Failures:
#  * every "not ok" case;
#  * cases a suite's plan (1..N) announces but the KTAP lacks (crashed or
#    hung test, or KUnit's per-case log overflowed);
#  * an expected suite without a KTAP file (module did not load or crashed);
#  * each kernel splat in the logs (lockdep, KASAN, UBSAN, KFENCE, kmemleak,
#    BUG, WARNING, sleeping in atomic context, Oops, panic).
# Exit status 0 only when nothing failed. Skipped cases count as passed but
# are listed as SKIP.
set -u
dir=$1
expected=$2
shift 2
pass=0
fail=0

while read -r suite; do
	[ -n "$suite" ] || continue
	f=$dir/$suite.ktap
	if [ ! -s "$f" ]; then
		echo "FAIL $suite (no KTAP: suite did not run or the guest crashed)"
		fail=$((fail + 1))
		continue
	fi
	plan=$(sed -n 's/^    1\.\.\([0-9]*\)$/\1/p' "$f" | head -n1)
	seen=0
	while IFS= read -r line; do
		case "$line" in
		"    ok "*"# SKIP"*)
			name=${line#    ok }; name=${name#* }; name=${name%% # SKIP*}
			echo "SKIP $suite.$name"; pass=$((pass + 1)); seen=$((seen + 1)) ;;
		"    ok "*)
			name=${line#    ok }; name=${name#* }
			echo "PASS $suite.$name"; pass=$((pass + 1)); seen=$((seen + 1)) ;;
		"    not ok "*)
			name=${line#    not ok }; name=${name#* }
			echo "FAIL $suite.$name"; fail=$((fail + 1)); seen=$((seen + 1)) ;;
		"KTAP version"*|*"    KTAP version"*|*"# Subtest:"*|"1.."*|"    1.."*|"ok "*|"not ok "*|"") ;;
		*)
			# diagnostics (failed expectations, kunit_info)
			echo "     $(echo "$line" | sed 's/^ *//')" ;;
		esac
	done < "$f"
	if [ -z "$plan" ]; then
		echo "FAIL $suite (KTAP without a plan)"
		fail=$((fail + 1))
	elif [ "$seen" -lt "$plan" ]; then
		echo "FAIL $suite: $((plan - seen)) of $plan cases have no result (crash, hang or log overflow)"
		fail=$((fail + plan - seen))
	fi
done < "$expected"

# Kernel splats. Each distinct matching line is one failure.
splat_re='possible circular locking|WARNING: possible|BUG: KASAN|UBSAN:|BUG:|WARNING:|sleeping function called from invalid context|BUG: KFENCE|kmemleak: .*new suspected memory leak|unreferenced object 0x|Oops|Kernel panic|general protection fault|INFO: task .* blocked for more than|rcu: INFO: rcu_.* detected stalls'
if [ $# -gt 0 ]; then
	splats=$(cat "$@" 2>/dev/null | tr -d '\r' | sed 's/^\[ *[0-9.]*\] //' |
		grep -E "$splat_re" | sort -u)
	if [ -n "$splats" ]; then
		while IFS= read -r l; do
			echo "SPLAT $l"
			fail=$((fail + 1))
		done <<< "$splats"
	fi
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

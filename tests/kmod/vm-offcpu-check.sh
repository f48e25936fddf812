#!/usr/bin/env bash
# Host side of the off-CPU scenarios (tests/kmod/vm-offcpu.sh): one line per
# check; exit 1 if any failed. Sourced checks also run from
# tests/kmod/vm-smoke-check.sh.
# usage: vm-offcpu-check.sh DIR SPULSE_BIN
set -u
d=$1
spulse=$2
log=$d/guest.log
dm=$d/oc.dmesg
here=$(cd "$(dirname "$0")" && pwd)
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "PASS $1"; }
no() { fail=$((fail + 1)); echo "FAIL $1${2:+: $2}"; }
check() { if eval "$2"; then ok "$1"; else no "$1"; fi; }
stat() { awk -v k="$2" 'BEGIN{v=0} $1==k{v=$2} END{print v}' "$1" 2>/dev/null || echo 0; }

for p in "offcpu=1 offcpu_threads=10" "offcpu=1 offcpu_threads=100000" \
	"offcpu=1 offcpu_min_us=60000001" "offcpu=1 subbuf_size=20000"; do
	check "offcpu refused $p" \
		"grep -q '^oc-badparam $p rc=[1-9][0-9]* loaded=no$' '$log'"
done
check "reason lines: offcpu_threads (2), offcpu_min_us (1), subbuf (1)" \
	"[ \$(grep -c 'spulse: invalid parameters: offcpu_threads must be 64..65536' '$dm') -eq 2 ] &&
	 [ \$(grep -c 'spulse: invalid parameters: offcpu_min_us must be' '$dm') -eq 1 ] &&
	 [ \$(grep -c 'spulse: invalid parameters: subbuf_size too small for one off-CPU interval' '$dm') -eq 1 ]"
for s in sleeper pingpong drain tiny whole hotplug off; do
	check "insmod $s" "grep -q '^oc-insmod $s rc=0$' '$log'"
done
check "trigger accepted" "grep -q '^oc-trigger rc=0$' '$log'"
check "trigger garbage refused" "grep -q '^oc-trigger garbage rc=1$' '$log'"
check "flush while recording" "grep -q '^oc-flush rc=0$' '$log'"
check "cpu1 offline and online while off-CPU recording" \
	"grep -q '^oc-cpu1 offline rc=0$' '$log' && grep -q '^oc-cpu1 online rc=0$' '$log'"
check "rmmod while recording (offcpu=1, whole system)" \
	"grep -q '^oc-rmmod while recording rc=0$' '$log'"

# the identities (docs/KERNEL.md, "Off-CPU"), exact after stop
for s in "$d"/oc.sleep.stats "$d"/oc.pp.stats "$d"/oc.ppd.stats \
	"$d"/oc.tiny.stats "$d"/oc.hp.stats; do
	n=$(basename "$s")
	[ -f "$s" ] || { no "$n" missing; continue; }
	t=$(stat "$s" offcpu_taken)
	sum=0
	for k in offcpu_written offcpu_filtered offcpu_dropped_buffer_full \
		offcpu_dropped_busy offcpu_dropped_no_slot \
		offcpu_dropped_too_deep offcpu_dropped_error \
		offcpu_dropped_queue_full offcpu_dropped_at_stop offcpu_lost \
		offcpu_open_at_stop; do
		sum=$((sum + $(stat "$s" $k)))
	done
	check "$n: offcpu_taken ($t) == sum of outcomes ($sum) > 0" \
		"[ '$t' -gt 0 ] && [ '$t' -eq '$sum' ]"
	w=$(stat "$s" wakeups_taken)
	sum=0
	for k in wakeups_attached wakeups_early wakeups_runnable \
		wakeups_repeat wakeups_unslotted wakeups_dropped_busy \
		wakeups_dropped_no_slot wakeups_dropped_too_deep; do
		sum=$((sum + $(stat "$s" $k)))
	done
	check "$n: wakeups_taken ($w) == sum of outcomes ($sum) > 0" \
		"[ '$w' -gt 0 ] && [ '$w' -eq '$sum' ]"
	e=$(stat "$s" wakeups_early)
	sum=$(( $(stat "$s" early_applied) + $(stat "$s" early_stale) + \
		$(stat "$s" early_at_stop) ))
	check "$n: wakeups_early ($e) == applied + stale + at_stop ($sum)" \
		"[ '$e' -eq '$sum' ]"
	st=$(stat "$s" samples_taken)
	sw=$(stat "$s" samples_written)
	sd=$(stat "$s" samples_dropped)
	check "$n: samples_taken ($st) == written + dropped" \
		"[ '$st' -eq \$(( $sw + $sd )) ]"
done
check "sleeper: >= 250 of 300 sleeps written" \
	"[ \$(stat '$d/oc.sleep.stats' offcpu_written) -ge 250 ]"
check "sleeper: one trigger written" \
	"[ \$(stat '$d/oc.sleep.stats' triggers_written) -eq 1 ]"
check "tiny: drops counted (no slot or buffer full)" \
	"[ \$(( \$(stat '$d/oc.tiny.stats' offcpu_dropped_no_slot) + \
	       \$(stat '$d/oc.tiny.stats' offcpu_dropped_buffer_full) )) -gt 0 ]"
check "offcpu=0: nothing off-CPU" \
	"[ \$(stat '$d/oc.off.stats' offcpu) -eq 0 ] &&
	 [ \$(stat '$d/oc.off.stats' offcpu_taken) -eq 0 ] &&
	 [ \$(stat '$d/oc.off.stats' wakeups_taken) -eq 0 ]"

for f in "$d"/oc.*.cpu[0-9]*; do
	[ -s "$f" ] || continue
	check "valid $(basename "$f")" "'$spulse' check '$f' >/dev/null 2>&1"
done
check "drainer spool with off-CPU records valid" \
	"'$spulse' check '$d/oc.pp.spulse' >/dev/null 2>&1"

# content: python3 $here/vm-offcpu-check.py prints PASS/FAIL lines
while read -r line; do
	case $line in
	PASS\ *) ok "${line#PASS }" ;;
	FAIL\ *) no "${line#FAIL }" ;;
	*) echo "$line" ;;
	esac
done < <(python3 "$here/vm-offcpu-check.py" "$d" "$spulse" 2>&1)

check "no WARN/BUG/lockdep/sleeping function in dmesg" \
	"! grep -Eq 'WARNING|BUG|sleeping function|possible recursive|circular locking|inconsistent lock' '$dm'"
echo "kmod-vm-offcpu: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

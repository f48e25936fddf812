#!/usr/bin/env bash
# Host side of `make kmod-vm-smoke`: assert what tests/kmod/vm-smoke.sh left in
# DIR. One line per check; exit 1 if any failed.
# usage: vm-smoke-check.sh DIR SPULSE_BIN
set -u
d=$1
spulse=$2
log=$d/guest.log
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "PASS $1"; }
no() { fail=$((fail + 1)); echo "FAIL $1${2:+: $2}"; }
check() { if eval "$2"; then ok "$1"; else no "$1"; fi; }

for p in target_pid=999999 freq=0 event=bogus max_user_depth=2000 \
	subbuf_size=100 n_subbufs=1; do
	check "refused $p" "grep -q '^badparam $p rc=[1-9][0-9]* loaded=no$' '$log'"
	n=${p%%=*}
	check "one reason line for $p" \
		"[ \$(grep 'spulse: invalid.*${n}' '$d/guest-dmesg.txt' | grep -vc 'relay buffers for') -eq 1 ]"
done
check "refused relay buffers over half the RAM" \
	"grep -q '^badparam relay-total rc=[1-9][0-9]* loaded=no' '$log'"
check "one reason line for the relay total" \
	"[ \$(grep -c 'spulse: invalid subbuf_size \\* n_subbufs: relay buffers for' '$d/guest-dmesg.txt') -eq 1 ]"
check "control garbage refused" "grep -q '^control bogus rc=1$' '$log'"
check "state unchanged after garbage" \
	"grep -q '^control after bogus: stopped$' '$log'"
check "rmmod while recording" "grep -q '^rmmod while recording rc=0$' '$log'"
check "cycles falls back to cpu-clock" \
	"grep -q 'falling back to cpu-clock' '$d/guest-dmesg.txt'"
check "drainer spool valid" "'$spulse' check '$d/gt.spulse' >/dev/null"
for s in "$d"/stats "$d"/stats.tiny; do
	[ -f "$s" ] || { no "stats file $(basename "$s")" missing; continue; }
	t=$(awk '$1=="samples_taken"{print $2}' "$s")
	w=$(awk '$1=="samples_written"{print $2}' "$s")
	x=$(awk '$1=="samples_dropped"{print $2}' "$s")
	check "$(basename "$s"): taken ($t) == written ($w) + dropped ($x) > 0" \
		"[ '$t' -gt 0 ] && [ '$t' -eq \$(( $w + $x )) ]"
done
check "tiny buffer drops counted" \
	"[ \$(awk '\$1==\"dropped_buffer_full\"{print \$2}' '$d/stats.tiny') -gt 0 ]"
for f in "$d"/*cpu[0-9]* "$d"/*meta; do
	[ -s "$f" ] || continue
	case $(basename "$f") in oc.*) continue ;; esac	# vm-offcpu-check.sh
	check "valid $(basename "$f")" "'$spulse' check '$f' >/dev/null 2>&1"
done
check "meta covers gt text" \
	"'$spulse' dump '$d/meta' | grep -q 'module id=0 .*path=.*/workload/gt build_id=[0-9a-f]'"
check "exec: deactivation then new modules" \
	"'$spulse' dump '$d/exec.meta' | grep -A1 '^process-deactivate' | grep -q '^module'"
check "python enter and leave" \
	"'$spulse' dump '$d/py.meta' | grep -q 'state=enter' && '$spulse' dump '$d/py.meta' | grep -q 'state=leave'"
check "no WARN/BUG/sleeping function in dmesg" \
	"! grep -Eq 'WARNING|BUG|sleeping function' '$d/guest-dmesg.txt'"
# off-CPU scenarios (tests/kmod/vm-offcpu.sh ran at the end of the guest script)
oc=$("$(dirname "$0")/vm-offcpu-check.sh" "$d" "$spulse")
printf '%s\n' "$oc" | grep -v '^kmod-vm-offcpu: '
p=$(printf '%s\n' "$oc" | grep -c '^PASS ')
f=$(printf '%s\n' "$oc" | grep -c '^FAIL ')
pass=$((pass + p))
fail=$((fail + f))
echo "kmod-vm-smoke: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

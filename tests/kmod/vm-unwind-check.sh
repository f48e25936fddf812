#!/bin/sh
# Host side of `make kmod-vm-unwind`: assert on what tests/kmod/vm-unwind-smoke.sh
# printed into OUTDIR/guest.log. Prints one PASS/FAIL line per fact and
# "kmod-vm-unwind: N passed, N failed".
# usage: vm-unwind-check.sh OUTDIR
log=$1/guest.log
pass=0
fail=0
ok() {	# name condition...
	n=$1; shift
	if "$@"; then pass=$((pass + 1)); echo "PASS $n"
	else fail=$((fail + 1)); echo "FAIL $n"; fi
}
has() { grep -qx -- "$1" "$log"; }
key() {	# label key -> value
	sed -n "s/^stats $1: .*\<$2 \([0-9]*\).*/\1/p" "$log" | head -n1
}
ge() { [ -n "$1" ] && [ -n "$2" ] && [ "$1" -ge "$2" ]; }
eq() { [ -n "$1" ] && [ "$1" = "$2" ]; }
delta() { echo $(( $(key "$1" "$3") - $(key "$2" "$3") )); }

[ -f "$log" ] || { echo "FAIL no $log"; echo "kmod-vm-unwind: 0 passed, 1 failed"; exit 1; }
for p in unwind=bogus unwind_mem_kb=0 unwind_mem_kb=4194305; do
	ok "refused $p" has "badparam $p rc=1 loaded=no"
done
ok "unwind file is 0600" grep -q -- '^-rw------- .*spulse/unwind$' "$log"
ok "tables mode without tables: every user stack truncated" \
	eq "$(key tables-none ustack_truncated)" "$(key tables-none samples_taken)"
ok "bad magic refused -EINVAL" has "bad-magic -22"
ok "map of an unknown table refused -ENOENT" has "unknown-table -2"
ok "short write refused -EINVAL" has "short -22"
ok "positive bp_off refused -EINVAL" has "bad-bp_off -22"
ok "refusals counted" has "refused_invalid 3"
ok "ADD accepted" has "add 76"
ok "MAP accepted" has "map 64"
ok "table listed" grep -q '^table 1 rows 1 range 0x0-0xffffffff' "$log"
c=$(delta tables-end tables-none ustack_complete)
s=$(delta tables-end tables-none samples_taken)
ok "END rows: >= 95% of samples complete ($c of $s)" ge $((c * 100)) $((s * 95))
c=$(delta tables-unknown tables-end ustack_complete)
ok "UNKNOWN rows: no sample complete" eq "$c" 0
ok "DEL accepted" has "del 24"
ok "DEL while recording frees it" eq "$(key del-while-recording unwind_tables)" 0
ok "fp mode: no table step, none complete" \
	eq "$(key fp-with-tables ustack_table_steps)$(key fp-with-tables ustack_complete)" 00
ok "fp mode: frame-pointer steps" ge "$(key fp-with-tables ustack_fp_steps)" 1
c=$(key auto-end ustack_complete)
s=$(key auto-end samples_taken)
ok "auto mode, END rows: >= 95% complete ($c of $s)" ge $((c * 100)) $((s * 95))
ok "auto mode, NONE rows: frame-pointer fallback" \
	ge "$(delta auto-none auto-end ustack_fp_steps)" 1
ok "exit: map set of the exiting process present before" \
	grep -q '^exit-before tables 1 processes 2 $' "$log"
ok "exit: its map set dropped, tables kept" \
	grep -q '^exit-after tables 1 processes 1 $' "$log"
ok "rmmod with tables loaded" has "rmmod auto with tables rc=0"
ok "memory bound: small table fits" has "big 12064"
ok "memory bound: large table refused -ENOSPC" has "big -28"
ok "memory bound: refusal counted" has "refused_nomem 1"
ok "dmesg clean" has "dmesg: clean"
echo "kmod-vm-unwind: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

#!/usr/bin/env bash
# Suite nmi (make check-nmi; not in make check, see mk/nmi.mk; issue 21
# item 2, docs/RT.md): spulse.ko's sample path run from NMI context on the
# KUnit debug kernel (lockdep,
# KASAN, KFENCE, UBSAN, DEBUG_ATOMIC_SLEEP; tests/kunit/build-kernel.sh).
# x86 runs a kernel-mode debug exception as an NMI; spulse.ko event=bp puts
# a perf execute breakpoint at a kernel function and samples from its
# overflow handler (tests/nmi/guest.sh says what each phase drives). Host
# checks, one PASS/FAIL line each:
#   bad_<case>        the load was refused (insmod failed) with its reason
#                     on one dmesg line
#   <phase>_load      insmod event=bp ... offcpu=1, spulse-drain and rmmod
#                     succeeded
#   <phase>_stats     the module's identities: seen == samples_taken ==
#                     samples_written + samples_dropped; at least 5 samples
#                     and an off-CPU interval written; phase inside: hits
#                     inside spulse's own busy sections were dropped
#                     (dropped_busy > 0)
#   <phase>_spool     `spulse check` passes on the phase's spool
#   <phase>_stacks    every sample's leaf is a kernel frame in the function
#                     the breakpoint is in (exec: exactly pipe_read+0x0)
#                     (tests/nmi/stacks.py); exec: pingpong's samples hold
#                     its user chain (pp_read under pp_ping or pp_pong) and
#                     vfs_read in the kernel chain; fork: user frames
#   nmi.exec is a SKIP on a kernel without CONFIG_KPROBES (x86 refuses
#                     kernel execute breakpoints there: both debug kernels)
#   splats            no BUG/WARNING/lockdep/KASAN/UBSAN/Oops/stall line
#                     in the console or dmesg
# RESULT: $BUILD/check/nmi.result ("passed failed"). NMI_SECS sets each
# phase's length (default 15 s). NMI_KERNEL=rt runs it on the PREEMPT_RT
# debug kernel (make nmi-rt). SPULSE_NMI_SRC=DIR builds spulse.ko from
# another copy of Kbuild, kmod/ and include/.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-$top/build}
secs=${NMI_SECS:-15}
out=$BUILD/nmi
scratch=$BUILD/nmi-build
result=$BUILD/check/nmi.result
mkdir -p "$BUILD/check"
rm -f "$result"
passed=0
failed=0
pass() { echo "PASS nmi.$1${2:+: $2}"; passed=$((passed + 1)); }
fail() { echo "FAIL nmi.$1: $2"; failed=$((failed + 1)); }
finish() {
	echo "$passed $failed" > "$result"
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}
die() { fail setup "$*"; finish; }

t0=$(date +%s)
# NMI_KERNEL=rt: the PREEMPT_RT debug kernel of make check-rt (tests/rt;
# built there, a cold build takes 30+ minutes) instead of the KUnit one.
kargs=()
case ${NMI_KERNEL:-kunit} in
kunit) ;;
rt) kargs=(--source 6.12 --config "$top/tests/kunit/debug.config" --config "$top/tests/rt/rt.config") ;;
*) die "NMI_KERNEL must be kunit or rt (got '$NMI_KERNEL')" ;;
esac
kdir=$("$top/tests/kunit/build-kernel.sh" "${kargs[@]}" | tail -n1) || die "debug kernel build failed"
[ -f "$kdir/arch/x86/boot/bzImage" ] || die "no bzImage in $kdir"
src=${SPULSE_NMI_SRC:-$top}
mkdir -p "$scratch"
rsync -a --delete --exclude='*.o' --exclude='*.ko' --exclude='.*.cmd' \
	"$src/kmod" "$src/include" "$scratch/" || die "rsync failed"
rsync -a "$src/Kbuild" "$scratch/Kbuild" || die "rsync failed"
rm -rf "$out"
mkdir -p "$out/vm/bin"
nice -n 10 make -s -C "$kdir" ARCH=x86_64 -j2 M="$scratch" modules \
	> "$out/build-spulse.log" 2>&1 ||
	{ tail -n 20 "$out/build-spulse.log" >&2; die "spulse.ko build failed"; }
make --no-print-directory -C "$top" BUILD="$BUILD" "$BUILD/spulse" \
	"$BUILD/spulse-drain" "$BUILD/workload/pingpong" > "$out/build-user.log" 2>&1 ||
	{ tail -n 20 "$out/build-user.log" >&2; die "user tools build failed"; }
cp "$scratch/spulse.ko" "$BUILD/spulse-drain" "$BUILD/workload/pingpong" \
	"$out/vm/bin/" || die "copying the binaries failed"
t1=$(date +%s)
echo "nmi: kernel $kdir, builds $((t1 - t0)) s"

# One host thread for both vCPUs: insmod/rmmod patch the scheduler
# tracepoints' static keys while pingpong switches (docs/VM.md, "Text
# patching under TCG").
VM_TCG_THREAD=${VM_TCG_THREAD:-single} "$top/tests/vm/run-vm.sh" \
	--kernel "$kdir/arch/x86/boot/bzImage" --kmods "" --cpus 2 --mem 2G \
	--timeout "${NMI_VM_TIMEOUT:-$((600 + 20 * secs))}" \
	--append "oops=panic panic_on_oops=1 kfence.sample_interval=10 ${NMI_APPEND:-}" \
	--out "$out/vm" -- "$here/guest.sh" "$out/vm/bin" "$secs" > "$out/run-vm.log" 2>&1
vmrc=$?
t2=$(date +%s)
echo "nmi: VM exit $vmrc ($((t2 - t1)) s)"
[ "$vmrc" -eq 0 ] || fail vm "run-vm exit $vmrc ($out/vm/console.log): $(tail -n 3 "$out/run-vm.log" | tr '\n' ' ')"
v=$out/vm

# refused loads: insmod failed, and the reason is in dmesg
bad() {	# CASE PATTERN
	local rc
	rc=$(cat "$v/bad-$1.rc" 2>/dev/null || echo missing)
	if [ "$rc" = 0 ] || [ "$rc" = missing ]; then
		fail "bad_$1" "insmod rc $rc (want a refusal)"
	elif grep -q "spulse: .*$2" "$v/bad-$1.dmesg"; then
		pass "bad_$1" "$(grep -m1 "spulse: .*$2" "$v/bad-$1.dmesg" | sed 's/^\[[^]]*\] //')"
	else
		fail "bad_$1" "no dmesg line matching '$2' ($v/bad-$1.dmesg)"
	fi
}
bad no_symbol 'invalid bp_symbol=: event=bp needs bp_symbol'
bad unknown_symbol 'invalid bp_symbol=spulse_no_such_function: .* is not the start'
bad wrong_addr 'invalid bp_symbol=pipe_read: .* is not the start'
bad mid_function 'invalid bp_symbol=pipe_read: .* is not the start'
bad without_bp 'invalid bp_symbol/bp_addr/bp_access: only with event=bp'
bad bad_access 'invalid bp_access=read: must be auto, x, w or rw'
bad access_mismatch 'invalid bp_access=x: jiffies+0x0/.* is not executable'

stat_of() { awk -v k="$2" '$1 == k { print $2 }' "$v/$1.stats" 2>/dev/null; }
for ph in tick fork inside exec; do
	case $ph in
	tick) leaf='~^(tick_do_update_jiffies64|do_timer)$' ;;
	fork) leaf='~^copy_process$' ;;
	inside) leaf='~(fast|timekeep)' ;;
	exec) leaf='=pipe_read' ;;
	esac
	line=$(grep "^phase $ph " "$v/phases.txt" 2>/dev/null)
	if [ -z "$line" ]; then
		fail "${ph}_load" "phase did not run"
		continue
	fi
	if [ $ph = exec ] && [[ $line != *"insmod_rc=0 "* ]] &&
		! grep -q '^CONFIG_KPROBES=y' "$kdir/.config" &&
		grep -q 'x86 refuses kernel execute breakpoints without CONFIG_KPROBES' "$v/$ph.dmesg"; then
		echo "SKIP nmi.exec: this kernel has no CONFIG_KPROBES, and x86 refuses kernel execute breakpoints without it (refused as expected: $(grep -m1 'cannot create' "$v/$ph.dmesg" | sed 's/^\[[^]]*\] //'))"
		continue
	fi
	case $line in
	*"insmod_rc=0 drain_rc=0 rmmod_rc=0"*) pass "${ph}_load" "${line#phase $ph } ($(grep -m1 'event=bp:' "$v/$ph.dmesg" | sed 's/^\[[^]]*\] //'))" ;;
	*) fail "${ph}_load" "${line#phase $ph } (dmesg: $(grep -m1 'spulse:' "$v/$ph.dmesg" 2>/dev/null))"
	   continue ;;
	esac
	seen=$(stat_of $ph seen)
	taken=$(stat_of $ph samples_taken)
	written=$(stat_of $ph samples_written)
	dropped=$(stat_of $ph samples_dropped)
	busy=$(stat_of $ph dropped_busy)
	ocw=$(stat_of $ph offcpu_written)
	ev=$(stat_of $ph event)
	desc="event=$ev seen=$seen taken=$taken written=$written dropped=$dropped dropped_busy=$busy offcpu_written=$ocw"
	if [ -z "$seen" ] || [ -z "$taken" ] || [ -z "$written" ] || [ -z "$dropped" ]; then
		fail "${ph}_stats" "stats missing ($v/$ph.stats)"
	elif [ "$ev" != bp ] || [ "$seen" != "$taken" ] || [ $((written + dropped)) != "$taken" ]; then
		fail "${ph}_stats" "identity broken: $desc"
	elif [ "$written" -lt 5 ]; then
		fail "${ph}_stats" "fewer than 5 samples written: $desc"
	elif [ "${ocw:-0}" -lt 1 ]; then
		fail "${ph}_stats" "no off-CPU interval written meanwhile: $desc"
	elif [ $ph = inside ] && [ "${busy:-0}" -lt 1 ]; then
		fail "${ph}_stats" "no breakpoint landed inside a busy section: $desc"
	else
		pass "${ph}_stats" "$desc"
	fi
	f=$v/$ph.spulse
	if [ ! -s "$f" ]; then
		fail "${ph}_spool" "no spool $f"
		continue
	fi
	if "$BUILD/spulse" check "$f" > "$f.check" 2>&1; then
		pass "${ph}_spool" "$(tail -n 1 "$f.check")"
	else
		fail "${ph}_spool" "$(tail -n 1 "$f.check")"
	fi
	if ! "$BUILD/spulse" export "$f" --format json -o "$f.json" 2> "$f.export.err"; then
		fail "${ph}_stacks" "spulse export failed: $(head -n 1 "$f.export.err")"
		continue
	fi
	if msg=$(python3 "$here/stacks.py" "$f.json" "$ph" "$written" "$leaf" 2>&1); then
		pass "${ph}_stacks" "$msg"
	else
		fail "${ph}_stacks" "$msg"
	fi
done

# splats: any kernel report in the console or the dmesg files
splat='BUG:|WARNING:|UBSAN:|possible circular locking|possible recursive locking|inconsistent lock state|Oops|Kernel panic|general protection fault|blocked for more than|rcu_.*stall|RCU stall|kmemleak|KFENCE:|KASAN:'
n=$(cat "$v/console.log" "$v"/*.dmesg "$v/dmesg.txt" 2>/dev/null | tr -d '\r' |
	grep -E "$splat" | sed 's/^\[[^]]*\] //' | sort -u | tee "$out/splats.txt" | wc -l)
if [ "$n" -eq 0 ]; then
	pass splats "none in console.log and $(ls "$v"/*.dmesg 2>/dev/null | wc -l) dmesg files"
else
	fail splats "$n distinct report lines, first: $(head -n 1 "$out/splats.txt")"
fi
echo "nmi: total $(( $(date +%s) - t0 )) s; logs in $v"
finish

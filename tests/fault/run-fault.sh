#!/usr/bin/env bash
# Suite "fault" (make check-fault) and its long form (make fault-long): the
# fault campaign of issue 10, docs/FAULT.md.
#
#   part 1, stock Debian kernel in QEMU (tests/vm/run-vm.sh):
#     spulse-drain and `spulse record` killed with SIGKILL at random moments
#     while recording; every spool's complete prefix must read back and hold
#     no sample twice; the module unloads and records again afterwards;
#     a full disk (64 KiB tmpfs) under spulse-drain and spulse record.
#   part 2, the KUnit debug kernel (KASAN, lockdep, UBSAN, KFENCE; built or
#     reused by tests/kunit/build-kernel.sh): rmmod under load, CPU
#     offline/online storms while recording, hotplug during load, target
#     exec/exit/thread/process churn, pid reuse; zero kernel splats, each
#     splat attributed to the scenario that was running.
#
# One PASS/FAIL line per scenario, then "fault: N passed, N failed"; the
# pair goes to $BUILD/check/fault.result. With FAULT_LONG=1 a table of
# figures follows (kills, spools checked, samples, duplicates, splats).
# Environment: BUILD, FAULT_KILLS (20), FAULT_RMMODS (10), FAULT_HOTPLUG
# (10 rounds), FAULT_SEED (random moments; printed, default from the clock),
# FAULT_PARTS ("stock debug"), FAULT_LONG (0), FAULT_OUT ($BUILD/fault),
# FAULT_EVAL_ONLY (1: judge a previous run's FAULT_OUT, boot nothing),
# FAULT_APPEND (extra kernel command line), FAULT_SCENARIOS (a subset of
# the debug-kernel scenarios, for debugging one). Both kernels boot with
# softlockup_panic=1 watchdog_thresh=30: a CPU stuck 60 s ends the run at
# once instead of at the VM timeout (60 s: a loaded host slows TCG); the
# stock one with loglevel=7, so a splat's stack trace reaches the console
# even when the guest never gets to save its dmesg.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-$top/build}
out=${FAULT_OUT:-$BUILD/fault}
spulse=$BUILD/spulse
kills=${FAULT_KILLS:-20}
rmmods=${FAULT_RMMODS:-10}
hotplug=${FAULT_HOTPLUG:-10}
seed=${FAULT_SEED:-$(date +%s)}
parts=${FAULT_PARTS:-stock debug}
passed=0
failed=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
check() {	# NAME CONDITION-RC DETAIL
	if [ "$2" -eq 0 ]; then pass "$1 ($3)"; else fail "$1" "$3"; fi
}
declare -A fig
finish() {
	echo "fault: $passed passed, $failed failed"
	mkdir -p "$BUILD/check"
	echo "$passed $failed" >"$BUILD/check/fault.result"
	if [ "${FAULT_LONG:-0}" = 1 ]; then
		echo
		echo "fault campaign figures (seed $seed)"
		printf '  %-44s %s\n' "figure" "value"
		for k in "${!fig[@]}"; do printf '  %-44s %s\n' "$k" "${fig[$k]}"; done | sort
	fi
	[ "$failed" -eq 0 ]
	exit
}
# splats FILE...: the kernel splat lines (tests/kunit/ktap-verdict.sh's list)
splats() {
	"$top/tests/kunit/ktap-verdict.sh" /nonexistent /dev/null "$@" |
		sed -n 's/^SPLAT //p'
}
notes() { [ -e "$1" ] && echo 1 || echo 0; }	# FILE: 1 if the guest noted trouble
# facts FILE: key=value facts of one spool (spool_facts.py) into $F[...]
declare -A F
facts() {
	local kv
	F=()
	for kv in $("$here/spool_facts.py" "$spulse" "$1"); do F[${kv%%=*}]=${kv#*=}; done
}

echo "fault: seed $seed, $kills kills, $rmmods rmmods, $hotplug hotplug rounds"
# FAULT_EVAL_ONLY=1: judge what a previous run left in $out, boot nothing
eval_only=${FAULT_EVAL_ONLY:-0}
[ "$eval_only" = 1 ] || rm -rf "$out"
mkdir -p "$out"

# ---------------------------------------------------------------- part 1
stock() {
	local o=$out/stock i kind delay rc n
	make --no-print-directory -C "$top" module "$spulse" "$BUILD/spulse-drain" \
		workloads >"$out/build-stock.log" 2>&1 ||
		{ fail stock-build "make module spulse spulse-drain workloads ($out/build-stock.log)"; return; }
	mkdir -p "$o"
	if [ "$eval_only" != 1 ]; then
	# the schedule: alternate drain/record; a quarter of the kills in the
	# first 0.5 s after the start (module load, headers, kallsyms copy),
	# the rest up to 2 s after the spool first holds data
	python3 - "$seed" "$kills" >"$o/schedule" <<'PY'
import random, sys
r = random.Random(int(sys.argv[1]))
for i in range(1, int(sys.argv[2]) + 1):
    start = r.random() < 0.25
    d = r.uniform(0, 0.5) if start else r.uniform(0, 2.0)
    print(i, "drain" if i % 2 else "record", "start" if start else "data", "%.3f" % d)
PY
	"$top/tests/vm/run-vm.sh" --timeout $((300 + kills * 20)) --out "$o" \
		--append "loglevel=7 softlockup_panic=1 watchdog_thresh=30 ${FAULT_APPEND:-}" -- \
		"$here/guest-stock.sh" "$BUILD" >"$o/run-vm.log" 2>&1
	echo $? >"$o/run-vm.rc"
	fi
	rc=$(cat "$o/run-vm.rc" 2>/dev/null || echo 0)
	[ $rc -eq 0 ] || fail stock-vm "run-vm exit $rc ($o/console.log): $(tail -n 3 "$o/run-vm.log" | tr '\n' ' ')"

	local -A nk=([drain]=0 [record]=0) spools=([drain]=0 [record]=0) \
		bad=([drain]=0 [record]=0) rec=([drain]=0 [record]=0) \
		nofile=([drain]=0 [record]=0) samp=([drain]=0 [record]=0)
	local dups=0 dupwhere= withdata=0 ndata=0 unl=0 unlbad= over=0 overwhere= badwhere= done_n
	done_n=$(wc -l <"$o/kills.done" 2>/dev/null || echo 0)
	while read -r i kind phase delay; do
		[ -e "$o/k$i.what" ] || continue
		nk[$kind]=$((nk[$kind] + 1))
		[ "$phase" = data ] && ndata=$((ndata + 1))
		if grep -q 'still loaded\|rmmod rc [1-9]\|insmod failed' "$o/k$i.notes" 2>/dev/null; then
			unlbad="$unlbad k$i($(tr '\n' ' ' <"$o/k$i.notes"))"
		else
			unl=$((unl + 1))
		fi
		if [ ! -e "$o/k$i.spulse" ]; then
			# killed before the spool was created
			nofile[$kind]=$((nofile[$kind] + 1))
			continue
		fi
		facts "$o/k$i.spulse"
		spools[$kind]=$((spools[$kind] + 1))
		if [ "${F[valid]}" != 1 ]; then
			bad[$kind]=$((bad[$kind] + 1))
			badwhere="$badwhere k$i($kind@$phase+${delay}s:${F[why]})"
		fi
		rec[$kind]=$((rec[$kind] + F[recovered]))
		samp[$kind]=$((samp[$kind] + F[dumped]))
		[ "${F[dumped]}" -gt 0 ] && withdata=$((withdata + 1))
		dups=$((dups + F[dups]))
		[ "${F[dups]}" -eq 0 ] || dupwhere="$dupwhere k$i:${F[dups]}"
		# the kernel wrote at least what the spool holds
		local w
		w=$(awk '$1 == "samples_written" { print $2 }' "$o/k$i.stats" 2>/dev/null)
		if [ -n "$w" ] && [ "${F[dumped]}" -gt "$w" ]; then
			over=$((over + 1)); overwhere="$overwhere k$i(${F[dumped]}>$w)"
		fi
	done <"$o/schedule"
	check kills-all-ran $(( done_n == kills ? 0 : 1 )) \
		"$done_n of $kills kills: ${nk[drain]} spulse-drain, ${nk[record]} spulse record"
	for kind in drain record; do
		check "kill-$kind-spools-valid" $(( bad[$kind] == 0 && spools[$kind] > 0 ? 0 : 1 )) \
			"${spools[$kind]} spools read back (${rec[$kind]} with a truncated tail, ${nofile[$kind]} kills before the file existed), ${samp[$kind]} samples${badwhere:+; invalid:$badwhere}"
	done
	# the campaign tests something only if most kills hit a recording
	check kills-hit-recordings $(( withdata * 4 >= ndata * 3 && withdata > 0 ? 0 : 1 )) \
		"$withdata killed spools hold samples ($ndata kills scheduled after the first data)"
	check kill-no-sample-twice $(( dups == 0 ? 0 : 1 )) \
		"$((samp[drain] + samp[record])) samples by (cpu, time, tid), $dups duplicates${dupwhere:+:$dupwhere}"
	check kill-spool-within-kernel-written $(( over == 0 ? 0 : 1 )) \
		"no spool holds more samples than the kernel's samples_written${overwhere:+;$overwhere}"
	local nall=$((nk[drain] + nk[record]))
	check kill-module-unloads $(( unl == nall && nall > 0 ? 0 : 1 )) \
		"rmmod after $unl of $nall kills${unlbad:+; failed:$unlbad}"
	fig["kills (spulse-drain + spulse record)"]="$done_n (${nk[drain]} + ${nk[record]})"
	fig["spools checked (truncated tail / no file)"]="$((spools[drain] + spools[record])) ($((rec[drain] + rec[record])) / $((nofile[drain] + nofile[record])))"
	fig["spools invalid"]=$((bad[drain] + bad[record]))
	fig["samples in killed spools"]=$((samp[drain] + samp[record]))
	fig["duplicate samples"]=$dups

	# a clean recording after the campaign
	n=$(sed -n 's/^spulse record: samples \([0-9]*\),.*/\1/p' "$o/after.out" 2>/dev/null)
	facts "$o/after.spulse"
	check after-kills-records $(( $(cat "$o/after.rc" 2>/dev/null || echo 1) == 0 &&
		F[valid] == 1 && F[recovered] == 0 && ${n:-0} > 0 && F[samples] == ${n:-0} ? 0 : 1 )) \
		"rc $(cat "$o/after.rc" 2>/dev/null), ${F[samples]} samples of ${n:-?} reported, module $(cat "$o/after.mod" 2>/dev/null) after"

	# full disk: spulse-drain
	facts "$o/fd.spulse"
	rc=$(cat "$o/fd.rc" 2>/dev/null || echo 99)
	# exit 1 (fatal, docs/DRAIN.md) by itself, not killed after 30 s
	check full-disk-drain-error $(( rc == 1 && ! $(notes "$o/fd.notes") ? 0 : 1 )) \
		"rc $rc: $(grep -m1 -i 'space' "$o/fd.out" 2>/dev/null)$(cat "$o/fd.notes" 2>/dev/null)"
	grep -q 'No space left on device' "$o/fd.out" 2>/dev/null
	check full-disk-drain-says-enospc $? "$(head -n1 "$o/fd.out" 2>/dev/null)"
	check full-disk-drain-prefix-valid $(( F[valid] == 1 && F[dumped] > 0 ? 0 : 1 )) \
		"${F[bytes]} bytes, ${F[complete]} complete, ${F[samples]} samples${F[why]/#-/}"
	n=$(sed -n 's/^spulse-drain: \([0-9]*\) samples written.*/\1/p' "$o/fd.out" 2>/dev/null)
	check full-disk-drain-summary-matches-file $(( ${n:--1} == F[samples] ? 0 : 1 )) \
		"summary says ${n:-?} samples written, the file holds ${F[samples]}"
	local want="stats ok stop ok state stopped start ok state running stop ok state stopped rmmod ok debugfs gone"
	[ "$(tr '\n' ' ' 2>/dev/null <"$o/fd.sanity" | sed 's/ $//')" = "$want" ]
	check full-disk-module-sane $? "$(tr '\n' ' ' 2>/dev/null <"$o/fd.sanity")"

	# full disk: spulse record
	facts "$o/fr.spulse"
	rc=$(cat "$o/fr.rc" 2>/dev/null || echo 0)
	check full-disk-record-error $(( rc != 0 && ! $(notes "$o/fr.notes") ? 0 : 1 )) \
		"rc $rc: $(grep -m1 'draining' "$o/fr.out" 2>/dev/null)$(cat "$o/fr.notes" 2>/dev/null)"
	check full-disk-record-prefix-valid $(( F[valid] == 1 && F[dumped] > 0 ? 0 : 1 )) \
		"${F[bytes]} bytes, ${F[complete]} complete, ${F[samples]} samples${F[why]/#-/}"
	n=$(sed -n 's/^spulse record: samples \([0-9]*\),.*/\1/p' "$o/fr.out" 2>/dev/null)
	check full-disk-record-summary-matches-file $(( ${n:--1} == F[samples] ? 0 : 1 )) \
		"summary says ${n:-?} samples, the file holds ${F[samples]}"
	[ "$(cat "$o/fr.mod" 2>/dev/null)" = unloaded ]
	check full-disk-record-unloads $? "module $(cat "$o/fr.mod" 2>/dev/null) after the error"

	local s
	s=$(splats "$o/console.log" "$o/dmesg.fault")
	check stock-no-splat $([ -z "$s" ]; echo $?) "${s:-console and dmesg clean}"
	fig["splats (stock kernel)"]=$(grep -c . <<<"$s")
}

# ---------------------------------------------------------------- part 2
debug() {
	local o=$out/debug kdir scratch=$BUILD/fault-kbuild rc name r s busy
	mkdir -p "$o"
	if [ "$eval_only" != 1 ]; then
	kdir=$("$top/tests/kunit/build-kernel.sh" | tail -n1)
	[ -f "$kdir/arch/x86/boot/bzImage" ] || { fail debug-kernel "no debug kernel ($kdir)"; return; }
	mkdir -p "$scratch" "$o/bin"
	rsync -a --delete --exclude='*.o' --exclude='*.ko' --exclude='.*.cmd' \
		"$top/kmod" "$top/include" "$scratch/" && rsync -a "$top/Kbuild" "$scratch/Kbuild" &&
		nice -n 10 make -s -C "$kdir" ARCH=x86_64 -j2 M="$scratch" modules \
		>"$out/build-debug.log" 2>&1 &&
		${CC:-cc} -O1 -g -fno-omit-frame-pointer -static -pthread -Wall -Wextra -Werror \
		-o "$o/bin/busy" "$top/tests/kunit/busy.c" &&
		${CC:-cc} -O1 -static -Wall -Wextra -Werror -o "$o/bin/pidreuse" "$here/pidreuse.c" &&
		cp "$scratch/spulse.ko" "$o/bin/" ||
		{ fail debug-build "spulse.ko for the debug kernel / busy ($out/build-debug.log)"; return; }
	python3 - "$seed" "$rmmods" >"$o/rmmod-schedule" <<'PY'
import random, sys
r = random.Random(int(sys.argv[1]) + 1)
for i in range(1, int(sys.argv[2]) + 1):
    print(i, "%.3f" % r.uniform(0.05, 1.5), i % 2)
PY
	"$top/tests/vm/run-vm.sh" --kernel "$kdir/arch/x86/boot/bzImage" --kmods "" \
		--cpus 2 --mem 2G --timeout $((400 + rmmods * 15 + hotplug * 10)) \
		--append "oops=panic panic_on_oops=1 kfence.sample_interval=10 softlockup_panic=1 watchdog_thresh=30 ${FAULT_APPEND:-}" \
		--out "$o" -- "$here/guest-debug.sh" "$o/bin/spulse.ko" "$o/bin/busy" "$o/bin/pidreuse" "$hotplug" \
		${FAULT_SCENARIOS:-} >"$o/run-vm.log" 2>&1
	echo $? >"$o/run-vm.rc"
	fi
	rc=$(cat "$o/run-vm.rc" 2>/dev/null || echo 0)
	[ $rc -eq 0 ] || fail debug-vm "run-vm exit $rc ($o/console.log): $(tail -n 3 "$o/run-vm.log" | tr '\n' ' ')"
	# the console, cut at the scenario marks
	tr -d '\r' <"$o/console.log" | awk -v d="$o" '
		/fault: --- / { sub(/.*fault: --- /, ""); name = $1; next }
		name != "" { print > (d "/console." name) }'
	local total=0 nstreams=0 nbad=0
	for name in ${FAULT_SCENARIOS:-rmmod_under_load hotplug_storm_target \
		hotplug_storm_whole_offcpu churn_exec churn_threads churn_exit process_churn \
		pid_reuse hotplug_during_load}; do
		r=$(cat "$o/res/$name" 2>/dev/null || echo "fail no result (guest crashed or hung: $o/console.log)")
		s=$(splats "$o/console.$name" 2>/dev/null)
		total=$((total + $(grep -c . <<<"$s")))
		if [ "${r%% *}" = ok ] && [ -z "$s" ]; then
			pass "$name (${r#ok }; no splat)"
		else
			fail "$name" "${r#* }${s:+; splats: $(head -n 3 <<<"$s" | tr '\n' '|')}"
		fi
	done
	# every stream read during a scenario is a valid prefix
	local bad=
	for st in "$o"/streams/*/cpu*; do
		[ -f "$st" ] || continue
		nstreams=$((nstreams + 1))
		facts "$st"
		[ "${F[valid]}" = 1 ] && [ "${F[dups]}" = 0 ] ||
			{ nbad=$((nbad + 1)); bad="$bad ${st#"$o"/streams/}(${F[why]},dups ${F[dups]})"; }
	done
	check debug-streams-valid $(( nstreams > 0 && nbad == 0 ? 0 : 1 )) \
		"$nstreams per-CPU streams read back, no sample twice${bad:+; bad:$bad}"
	# pid reuse: the new process must not be in the streams (its samples
	# by comm: "reuse", or "pidreuse" = the helper's vfork child before it
	# execs; the old target is "busy")
	local pid by
	pid=$(cat "$o/res/pid_reuse.pid" 2>/dev/null)
	if [[ " ${FAULT_SCENARIOS:-pid_reuse} " != *" pid_reuse "* ]]; then
		:
	elif [ -n "$pid" ]; then
		by=$(for st in "$o"/streams/pid_reuse/cpu*; do "$spulse" dump "$st"; done 2>/dev/null |
			awk -v pid="$pid" '
			/^# header/ { delete c }
			/^thread / { for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
				c[f["id"]] = f["pid"] == pid ? f["comm"] : "other" }
			/^sample / { for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
				n[c[f["thread"]]]++ }
			END { for (k in n) printf "%s %d, ", k, n[k] }')
		# the old target's samples show the streams are there at all
		[[ "$by" == *"busy "* && "$by" != *"reuse "* ]]
		check pid-reuse-new-process-not-recorded $? \
			"samples in the streams by comm of pid $pid: ${by%, } (busy = the old target)"
	else
		fail pid-reuse-new-process-not-recorded "no reuse happened (see pid_reuse)"
	fi
	s=$(splats "$o/console.log" "$o/dmesg.txt")
	check debug-no-splat $([ -z "$s" ]; echo $?) "${s:-console and dmesg clean}"
	fig["rmmods under load"]=$rmmods
	fig["hotplug rounds (x2 storms, + loads)"]=$hotplug
	fig["debug-kernel streams checked (invalid)"]="$nstreams ($nbad)"
	fig["splats (debug kernel)"]=$(grep -c . <<<"$s")
}

for p in $parts; do
	case $p in stock|debug) $p ;; *) fail parts "unknown part $p" ;; esac
done
finish

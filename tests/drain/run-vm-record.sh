#!/usr/bin/env bash
# Suite record-vm: `spulse record` with the real spulse.ko in the VM
# (tests/vm/run-vm.sh, stock Debian kernel, TCG): `-- CMD` (loads, records
# the forked child, unloads), `-p PID -d 2`, and a module that was already
# loaded (used, left loaded). Checks the spools on the host.
# Writes $BUILD/check/record-vm.result.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$top/build}
out=$BUILD/record-vm
spulse=$BUILD/spulse
passed=0
failed=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
finish() {
	echo "record-vm: $passed passed, $failed failed"
	mkdir -p "$BUILD/check"
	echo "$passed $failed" >"$BUILD/check/record-vm.result"
	[ "$failed" -eq 0 ]
	exit
}

make --no-print-directory -C "$top" module "$spulse" workloads \
	"$BUILD/workload/pingpong" >/dev/null ||
	{ fail build "make module spulse workloads failed"; finish; }
rm -rf "$out"
mkdir -p "$out"
# no_timer_check: the kernel's IO-APIC timer check panics the boot ("IO-APIC
# + timer doesn't work!") when a loaded host starves the TCG vCPUs
"$top/tests/vm/run-vm.sh" --timeout "${RECORD_VM_TIMEOUT:-300}" --append no_timer_check \
	--out "$out" -- \
	"$top/tests/drain/guest-record.sh" "$BUILD" >"$out/run-vm.log" 2>&1
rc=$?
[ $rc -eq 0 ] || { fail vm "run-vm exit $rc ($out/console.log)"; finish; }

# samples NAME: the count in the summary line of NAME.out
summary_samples() { sed -n 's/^spulse record: samples \([0-9]*\),.*/\1/p' "$out/$1.out"; }
# check_spool NAME PID: valid, complete, sample count = summary, every
# thread of PID, user frames module-relative
check_spool() {
	local name=$1 pid=$2 n json pids
	n=$(summary_samples "$name")
	json=$("$spulse" check --json "$out/$name.spulse" 2>&1) ||
		{ fail "$name-valid" "$json"; return; }
	if grep -q "\"samples\":$n," <<<"$json" && grep -q '"recovered":false' <<<"$json" &&
		[ "${n:-0}" -gt 0 ]; then
		pass "$name-valid ($n samples)"
	else
		fail "$name-valid" "summary $n vs $json"
	fi
	"$spulse" dump "$out/$name.spulse" >"$out/$name.dump"
	pids=$(sed -n 's/^thread .* pid=\([0-9]*\) .*/\1/p' "$out/$name.dump" | sort -u)
	if [ "$pids" = "$pid" ]; then
		pass "$name-only-target-threads"
	else
		fail "$name-only-target-threads" "pids: $(echo $pids) want $pid"
	fi
	# every user frame inside the workload's text is module-relative
	# (including samples taken just before the process exits)
	local r nmod rel abs
	r=$(python3 - "$out/$name.dump" <<'PY'
import re, sys
mods, rel, absn = [], 0, 0
for line in open(sys.argv[1]):
    f = dict(x.split("=", 1) for x in line.split()[1:] if "=" in x)
    if line.startswith("module ") and re.search(r"/workload/gt$", f.get("path", "")):
        mods.append((int(f["start"], 16), int(f["end"], 16)))
    elif line.startswith("frame ") and f.get("kind") == "module":
        rel += 1
    elif line.startswith("frame ") and f.get("kind") == "user":
        a = int(f["addr"], 16)
        absn += any(lo <= a < hi for lo, hi in mods)
print(len(mods), rel, absn)
PY
)
	read -r nmod rel abs <<<"$r"
	if [ "$nmod" -gt 0 ] && [ "$rel" -gt 0 ] && [ "$abs" -eq 0 ]; then
		pass "$name-module-relative-frames ($rel module-relative)"
	else
		fail "$name-module-relative-frames" "gt modules $nmod, module-relative $rel, absolute inside gt text $abs"
	fi
}

gtpid=$(sed -n 's/^gt pid //p' "$out/cmd.out")
if [ "$(cat "$out/cmd.rc")" = 0 ] && [ "$(cat "$out/cmd.before")" = unloaded ] &&
	[ "$(cat "$out/cmd.after")" = unloaded ]; then
	pass "cmd-loads-and-unloads"
else
	fail cmd-loads-and-unloads "rc $(cat "$out/cmd.rc") $(cat "$out/cmd.before") -> $(cat "$out/cmd.after"): $(cat "$out/cmd.out")"
fi
check_spool cmd "$gtpid"
if [ -s "$out/cmd.spulse.kallsyms" ]; then
	pass cmd-kallsyms-saved
else
	fail cmd-kallsyms-saved "missing or empty"
fi

if [ "$(cat "$out/pid.rc")" = 0 ] &&
	d=$(sed -n 's/.*duration \([0-9.]*\) s.*/\1/p' "$out/pid.out") &&
	awk -v d="$d" 'BEGIN { exit !(d >= 2 && d < 6) }'; then
	pass "pid-duration ($d s)"
else
	fail pid-duration "$(cat "$out/pid.out")"
fi
check_spool pid "$(cat "$out/pid.pid")"

if [ "$(cat "$out/pre.rc")" = 0 ] && [ "$(cat "$out/pre.after")" = loaded ] &&
	grep -q 'already loaded' "$out/pre.out" && [ "$(summary_samples pre)" -gt 0 ]; then
	pass "preloaded-used-and-left-loaded ($(summary_samples pre) samples)"
else
	fail preloaded-used-and-left-loaded "$(cat "$out/pre.rc") $(cat "$out/pre.after"): $(cat "$out/pre.out")"
fi
# --off-cpu: valid spool with intervals, every interval of a pingpong thread
ocpid=$(sed -n 's/^pingpong pid //p' "$out/oc.out")
if [ "$(cat "$out/oc.rc")" = 0 ] && json=$("$spulse" check --json "$out/oc.spulse" 2>&1) &&
	n=$(sed -n 's/.*"offcpu":\([0-9]*\).*/\1/p' <<<"$json") && [ "${n:-0}" -gt 0 ]; then
	pass "offcpu-record-valid ($n intervals)"
else
	fail offcpu-record-valid "rc $(cat "$out/oc.rc"): ${json:-} $(tail -3 "$out/oc.out")"
fi
"$spulse" dump "$out/oc.spulse" >"$out/oc.dump" 2>&1
bad=$(python3 - "$out/oc.dump" "${ocpid:-0}" <<'PY'
import sys
th, bad, n = {}, 0, 0
for line in open(sys.argv[1]):
    f = dict(x.split("=", 1) for x in line.split()[1:] if "=" in x)
    if line.startswith("thread "):
        th[f["id"]] = f["pid"]
    elif line.startswith("offcpu "):
        n += 1
        bad += th.get(f["thread"]) != sys.argv[2]
print(n, bad)
PY
)
if [ "${bad#* }" = 0 ] && [ "${bad% *}" -gt 0 ]; then
	pass "offcpu-intervals-of-target (${bad% *})"
else
	fail offcpu-intervals-of-target "intervals / not of pid $ocpid: $bad"
fi
# --flight: two dumps, the first cut by the kernel's manual mark, the second
# by SIGUSR1; both valid, with intervals and samples
if [ "$(cat "$out/fl.rc")" = 0 ] && [ -f "$out/fl-001.spulse" ] && [ -f "$out/fl-002.spulse" ] &&
	[ ! -e "$out/fl-003.spulse" ]; then
	pass flight-two-dumps
else
	fail flight-two-dumps "rc $(cat "$out/fl.rc"): $(ls "$out" | grep '^fl') $(tail -5 "$out/fl.out")"
fi
for pair in 001:manual 002:signal; do
	i=${pair%%:*}
	why=${pair#*:}
	f=$out/fl-$i.spulse
	"$spulse" dump "$f" >"$out/fl-$i.dump" 2>&1
	# a dump starts with its identity (the recording's host), then the
	# trigger mark that cut it
	if json=$("$spulse" check --json "$f" 2>&1) &&
		sed -n 2p "$out/fl-$i.dump" | grep -q "^identity " &&
		sed -n 3p "$out/fl-$i.dump" | grep -q "^trigger .*reason=$why seq=" &&
		[ "$(sed -n 's/.*"samples":\([0-9]*\).*/\1/p' <<<"$json")" -gt 0 ]; then
		pass "flight-dump-$i-$why ($(sed -n 's/.*"offcpu":\([0-9]*\).*/\1/p' <<<"$json") intervals)"
	else
		fail "flight-dump-$i-$why" "${json:-} $(sed -n 1,4p "$out/fl-$i.dump")"
	fi
done
# --module-params sample_null=1: the events fired mid-run (seen > 0) and
# nothing was taken or written; the spool is valid and holds no sample
seen=$(sed -n 's/^seen *\([0-9]*\).*/\1/p' "$out/null.stats" 2>/dev/null)
taken=$(sed -n 's/^samples_taken *\([0-9]*\).*/\1/p' "$out/null.stats" 2>/dev/null)
if [ "$(cat "$out/null.rc")" = 0 ] && [ "$(summary_samples null)" = 0 ] &&
	[ "${seen:-0}" -gt 100 ] && [ "$taken" = 0 ] &&
	json=$("$spulse" check --json "$out/null.spulse" 2>&1) &&
	grep -q '"samples":0,' <<<"$json"; then
	pass "module-params-sample-null (seen $seen, taken $taken)"
else
	fail module-params-sample-null "rc $(cat "$out/null.rc") seen ${seen:-?} taken ${taken:-?} (stats polled $(cat "$out/null.tries" 2>/dev/null || echo ?) times, $([ -s "$out/null.stats" ] && echo "the last running read kept" || echo "never running")): $(tail -2 "$out/null.out") ${json:-}"
fi
# a value the module refuses: the load fails (-EINVAL, the module's dmesg
# line), record exits 1 naming the parameters, and nothing is left loaded
if [ "$(cat "$out/badp.rc")" = 1 ] && [ "$(cat "$out/badp.after")" = unloaded ] &&
	grep -q "n_subbufs=1): Invalid argument" "$out/badp.out" &&
	grep -q "spulse: invalid parameters: .*n_subbufs" "$out/dmesg.record"; then
	pass module-params-bad-value-refused
else
	fail module-params-bad-value-refused "rc $(cat "$out/badp.rc") $(cat "$out/badp.after"): $(cat "$out/badp.out")"
fi
if grep -E 'WARNING|BUG|sleeping function' "$out/dmesg.record" >/dev/null; then
	fail dmesg-clean "$(grep -E 'WARNING|BUG|sleeping function' "$out/dmesg.record" | head -3)"
else
	pass dmesg-clean
fi
finish

#!/usr/bin/env bash
# Suite "demos": the README's three demos run as a user runs them (make
# demo, make demo-latency, make demo-unwind; each boots the VM once), and
# what each README block says about its output is checked on that output.
# The demos write into DEMO_DIR=$BUILD/demos/NAME instead of the
# repository's top; their logs are $BUILD/demos/NAME.log.
# Writes $BUILD/check/demos.result ("passed failed").
#
# DEMOS="demo latency unwind" (the default) picks the demos to run;
# DEMOS_REUSE=1 checks the logs and directories an earlier run left in
# $BUILD/demos without running the demos again.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-$top/build}
out=$BUILD/demos
S=$BUILD/spulse
passed=0
failed=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }

# run_demo NAME TARGET: make TARGET with DEMO_DIR=$out/NAME, output in
# $out/NAME.log; passes NAME-runs when it exits 0
run_demo() {
	local rc
	if [ "${DEMOS_REUSE:-0}" = 1 ]; then
		rc=$(sed -n 's/^demos: exit //p' "$out/$1.log")
		if [ "${rc:-1}" = 0 ]; then
			pass "$1-runs"
		else
			fail "$1-runs" "make $2 exit ${rc:-?}: $(tail -n 4 "$out/$1.log" | tr '\n' ' ')"
		fi
		return "${rc:-1}"
	fi
	rm -rf "${out:?}/$1"
	mkdir -p "$out/$1"
	echo "demos: make $2 (log: $out/$1.log)"
	DEMO_DIR=$out/$1 make --no-print-directory -C "$top" BUILD="$BUILD" "$2" \
		>"$out/$1.log" 2>&1
	rc=$?
	echo "demos: exit $rc" >>"$out/$1.log"
	if [ $rc -eq 0 ]; then
		pass "$1-runs"
	else
		fail "$1-runs" "make $2 exit $rc: $(tail -n 4 "$out/$1.log" | tr '\n' ' ')"
	fi
	return $rc
}

# svg_ok FILE WORD: an SVG document, whole, naming WORD
svg_ok() {
	[ -s "$1" ] && head -c 400 "$1" | grep -q '<svg' &&
		tail -c 100 "$1" | grep -q '</svg>' && grep -q -- "$2" "$1"
}

# A reader that quits early (head, grep -q/-m, sed q) kills the writer
# before it with SIGPIPE once its output passes a pipe buffer; under
# pipefail the demo then stops (make demo-latency: Error 141).
bad=$(grep -nE '\|[[:space:]]*(head|grep[[:space:]]+(-[a-zA-Z]*[qm]|--quiet|--max-count)|sed[[:space:]]+(-n[[:space:]]+)?[^|]*q)' \
	"$top"/tests/vm/demo*.sh "$top"/tests/vm/guest-demo*.sh)
if [ -z "$bad" ]; then
	pass demo-scripts-no-early-quitting-readers
else
	fail demo-scripts-no-early-quitting-readers "$bad"
fi

demos=${DEMOS:-demo latency unwind}
mkdir -p "$out"

# ---- make demo ---------------------------------------------------------
if [[ " $demos " == *" demo "* ]] && run_demo demo demo; then
	d=$out/demo
	log=$out/demo.log
	if json=$("$S" check --json "$d/demo.spulse" 2>&1) &&
		n=$(sed -n 's/.*"samples":\([0-9]*\),.*/\1/p' <<<"$json") &&
		[ "${n:-0}" -ge 500 ]; then
		pass "demo-spool-valid ($n samples)"
	else
		fail demo-spool-valid "${json:-no spool} (need >= 500 samples)"
	fi
	if svg_ok "$d/demo.svg" gt_burn; then
		pass demo-svg-written
	else
		fail demo-svg-written "$(ls -l "$d/demo.svg" 2>&1)"
	fi
	# the printed `spulse report --top 15`: the workload's own hot
	# function among the first rows, named (symbols of the host's gt);
	# its callers named too, by total (by self, gt's second row is a
	# handful of samples in read()'s wrapper, or none)
	rows=$(sed -n '/^# .*demo.spulse: [0-9]* samples/,$p' "$log" | sed -n 3,17p)
	callers=$("$S" report "$d/demo.spulse" --user --by total --top 8 2>&1)
	if sed -n 1,3p <<<"$rows" | grep -q ' gt_burn \[.*/workload/gt\]$' &&
		[ "$(grep -c '\[.*/workload/gt\]$' <<<"$callers")" -ge 2 ]; then
		pass demo-top-functions-are-the-workloads
	else
		fail demo-top-functions-are-the-workloads "$rows
$callers"
	fi
	# flame and report agree on every function's total (issue 22): self =
	# the folded lines whose leaf it is, total = the lines holding it
	if r=$(python3 "$top/tests/cli/flame_report_agree.py" "$S" "$d/demo.spulse" 2>&1); then
		pass "demo-flame-and-report-agree ($(tail -n1 <<<"$r"))"
	else
		fail demo-flame-and-report-agree "$r"
	fi
	# [vdso] frames are named from the image saved at record time: every
	# [vdso] address inside one of the saved image's function symbols is
	# named, and at least one frame is. The image's dynamic symbols do not
	# cover its static helpers (6.1's vread_tsc-like counter read at
	# 0x6b0..0x77c); a sample there stays an address, and the check proves
	# from the image itself (readelf) that no symbol covers it.
	folded=$("$S" flame --folded "$d/demo.spulse")
	unres=$(grep -oE '0x[0-9a-f]+ \[vdso\]' <<<"$folded" | sort -u)
	named=$(grep -cE '(^|;)__vdso_[a-z_]+(;| )' <<<"$folded" || true)
	covered=
	if [ -s "$d/demo.spulse.vdso" ]; then
		ranges=$(readelf -Ws "$d/demo.spulse.vdso" |
			awk '$4 == "FUNC" && $3 > 0 { print $2, $3 }')
		for a in $(cut -d' ' -f1 <<<"$unres"); do
			while read -r v z; do
				if (( a >= 0x$v && a < 0x$v + z )); then
					covered+="$a "
				fi
			done <<<"$ranges"
		done
	fi
	if [ -s "$d/demo.spulse.vdso" ] && [ "$named" -ge 1 ] && [ -z "$covered" ]; then
		pass "demo-vdso-sidecar-names-vdso-frames ($named named stacks; outside every symbol: $(tr '\n' ' ' <<<"$unres"))"
	else
		fail demo-vdso-sidecar-names-vdso-frames "files: $(cd "$d" && echo *) named stacks: $named unresolved inside a symbol: ${covered:-none}"
	fi
fi

# ---- make demo-latency -------------------------------------------------
if [[ " $demos " == *" latency "* ]] && run_demo latency demo-latency; then
	d=$out/latency
	log=$out/latency.log
	# the README and docs/LATENCY.md quote the command the demo ran
	cmd=$(grep -m1 '^\$ spulse record ' "$log")
	miss=
	for f in README.md docs/LATENCY.md; do
		grep -qxF -- "$cmd" "$top/$f" || miss="$miss $f"
	done
	if [ -n "$cmd" ] && [ -z "$miss" ]; then
		pass latency-docs-quote-the-command-run
	else
		fail latency-docs-quote-the-command-run "'$cmd' not in:$miss"
	fi
	name=$(sed -n 's/^demo-latency: .* analysing \([^ ,]*\), .*/\1/p' "$log")
	if [ -n "$name" ] && r=$(python3 "$here/stall_check.py" "$S" check "$d/$name"); then
		pass "latency-dump-holds-the-stall ($r)"
	else
		fail latency-dump-holds-the-stall "${name:-no dump named}: ${r:-}"
	fi
	if svg_ok "$d/stall-offcpu.svg" flusher; then
		pass latency-offcpu-svg-written
	else
		fail latency-offcpu-svg-written "$(ls -l "$d/stall-offcpu.svg" 2>&1)"
	fi
	if r=$(python3 - "$d/stall.trace.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
blocked = sum(1 for e in ev if e.get("name", "").startswith("blocked"))
assert blocked > 0, "no blocked slice"
print("%d events, %d blocked slices" % (len(ev), blocked))
PY
); then
		pass "latency-trace-json-written ($r)"
	else
		fail latency-trace-json-written "$(ls -l "$d/stall.trace.json" 2>&1) $r"
	fi
	# the two heaviest blocked;--;waker stacks were printed
	w=$(sed -n '/^\$ spulse flame --wakers --folded /,/^$/p' "$log" | sed 1d |
		grep -cE ';--;.* [0-9]+$')
	if [ "$w" = 2 ]; then
		pass latency-wakers-folded-printed
	else
		fail latency-wakers-folded-printed "$w lines"
	fi
fi

# ---- make demo-unwind --------------------------------------------------
if [[ " $demos " == *" unwind "* ]] && run_demo unwind demo-unwind; then
	d=$out/unwind
	log=$out/unwind.log
	# every file a printed command writes (-o NAME) is there, valid
	bad=
	n=0
	while read -r f; do
		n=$((n + 1))
		"$S" check "$d/$f" >/dev/null 2>&1 || bad="$bad $f"
	done < <(sed -n 's/^\$ spulse record .* -o \([^ ]*\) .*/\1/p' "$log")
	if [ "$n" -gt 0 ] && [ -z "$bad" ]; then
		pass "unwind-printed-files-exist ($n)"
	else
		fail unwind-printed-files-exist "missing or invalid:${bad:- no -o in the log}"
	fi
	# the printed sample: kernel frames, then a whole user stack ending in
	# the thread entry, through the interpreter
	if r=$(python3 - "$log" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().split("\n")
i = next(k for k, l in enumerate(lines) if l.startswith("one sample of python3"))
fr = []
for l in lines[i + 1:]:
    m = re.match(r"  (kernel|user)\s+\S+\s+(\S+)$", l)
    if not m:
        break
    fr.append(m.groups())
kern = [n for k, n in fr if k == "kernel"]
user = [n for k, n in fr if k == "user"]
assert kern and user and [k for k, _ in fr] == ["kernel"] * len(kern) + ["user"] * len(user), fr
assert len(user) >= 12, user
assert user[-1] in ("_start", "start_thread") or user[-1].endswith("clone3"), user[-1]
assert "_PyEval_EvalFrameDefault" in user, user
print("%d kernel + %d user frames, down to %s" % (len(kern), len(user), user[-1]))
PY
); then
		pass "unwind-whole-stack-printed ($r)"
	else
		fail unwind-whole-stack-printed "$r"
	fi
	tab=$(sed -n 's/^python-unwind.spulse: .* (\([0-9.]*\)%) reach .*/\1/p' "$log")
	fp=$(sed -n 's/^python-fp.spulse: .* (\([0-9.]*\)%) reach .*/\1/p' "$log")
	if [ -n "$tab" ] && [ -n "$fp" ] &&
		awk -v t="$tab" -v f="$fp" 'BEGIN { exit !(t >= 80 && f <= 20) }'; then
		pass "unwind-tables-reach-the-entry (tables $tab%, fp $fp%)"
	else
		fail unwind-tables-reach-the-entry "tables ${tab:-?}% (want >= 80), fp ${fp:-?}% (want <= 20)"
	fi
fi

echo "demos: $passed passed, $failed failed"
mkdir -p "$BUILD/check"
echo "$passed $failed" >"$BUILD/check/demos.result"
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# Suite "drain": spulse-drain and `spulse record` against a FAKE debugfs
# directory written by gen_fake (the kernel cannot run here). Usage:
#   run.sh BINDIR     (BINDIR holds spulse-drain (ASan+UBSan), gen_fake,
#                      verify_spool, test_merge, record; BUILD/spulse-drain
#                      is the optimized drainer)
# Prints PASS/FAIL per test and writes $BUILD/check/drain.result.
set -u
# the drainer's identity record carries a random recording id; the same
# one for every run here, so that two runs' spools compare equal
export SPULSE_RECORDING_ID=0123456789abcdef0123456789abcdef
bin=$1
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$top/build}
drain_san=$bin/spulse-drain
drain_opt=$build/spulse-drain
gen=$bin/gen_fake
verify=$bin/verify_spool
spulse=$build/spulse
work=$(mktemp -d "${TMPDIR:-/tmp}/spulse-drain-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
passed=0
failed=0

pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
# wait up to 2 s for PATH to exist (a writer started in the background)
wait_for() { for _ in $(seq 200); do [ -e "$1" ] && break; sleep 0.01; done; }

# fresh fake debugfs dir: fake NAME GEN-ARGS...
fake() {
	local name=$1
	shift
	rm -rf "$work/$name"
	mkdir -p "$work/$name/spulse"
	"$gen" --dir "$work/$name/spulse" --truth "$work/$name/truth" \
		--kallsyms "$work/$name/kallsyms" "$@"
}

# ---- unit tests: each binary prints "PASS name" / "FAIL name: why" ---------
# unit PREFIX BINARY: one check per line, and one more if it exits non-zero
# without having reported a failure
unit() {
	local pre=$1 t=$2 out rc f0=$failed verdict name rest
	out=$("$bin/$t" 2>&1)
	rc=$?
	while read -r verdict name rest; do
		case $verdict in
		PASS) pass "$pre/$name" ;;
		FAIL) fail "$pre/$name" "$rest" ;;
		esac
	done <<<"$out"
	[ $rc -eq 0 ] || [ "$failed" -gt "$f0" ] || fail "$pre/exit" "$t exited $rc: $out"
}
unit merge test_merge
unit meta test_meta_forward
unit flight-unit test_flight
unit kallsyms-unit test_kallsyms
unit kstat-unit test_kstat

# ---- basic: --once over 4 CPUs (one idle), both builds ------------------
fake basic --cpus 4 --idle 1 --samples 3000 --seed 11
for pair in "san:$drain_san" "opt:$drain_opt"; do
	tag=${pair%%:*}
	d=${pair#*:}
	spool=$work/basic/out-$tag.spulse
	"$d" --debugfs "$work/basic/spulse" -o "$spool" --once \
		--kallsyms "$work/basic/kallsyms" 2>"$work/basic/err-$tag"
	rc=$?
	if [ $rc -ne 0 ]; then
		fail "once-basic-$tag" "exit $rc: $(cat "$work/basic/err-$tag")"
	elif ! v=$("$verify" "$spool" "$work/basic/truth" 2>&1); then
		fail "once-basic-$tag" "$v"
	else
		pass "once-basic-$tag ($v)"
	fi
done
# ---- a backlog outlasts the passive deadline ---------------------------
# Without --control the finish stops chasing a module that keeps writing
# FINISH_PASSIVE_MS after it began, but what was readable when it began
# is owed in full: with the deadline at 0 ms (test hook) a backlog of
# 4 x 20000 samples (many 64 KiB read rounds) must still come out whole.
# The old drainer read nothing (the deadline passed before its first round).
fake backlog --cpus 4 --samples 20000 --seed 13
SPULSE_DRAIN_PASSIVE_MS=0 "$drain_san" --debugfs "$work/backlog/spulse" \
	-o "$work/backlog/out.spulse" --once --kallsyms "$work/backlog/kallsyms" \
	2>"$work/backlog/err"
rc=$?
if [ $rc -ne 0 ]; then
	fail once-backlog-outlasts-passive-deadline "exit $rc: $(cat "$work/backlog/err")"
elif ! v=$("$verify" "$work/backlog/out.spulse" "$work/backlog/truth" 2>&1); then
	fail once-backlog-outlasts-passive-deadline "$v"
else
	pass "once-backlog-outlasts-passive-deadline ($v)"
fi
# ---- shared stacks: two processes through the same local stack ids ----
# A small pool (--stacks 40 per process) drawn from the same frame
# addresses: the processes' prefixes share local frame and stack ids, so
# the renumbering holds a second process's mappings of one local id (its
# side table) while the first keeps its own. Every sample's frames must
# resolve in its own process (module-relative for the target's modules)
# as the truth says; a mapping handed to the wrong process fails here.
fake shared --cpus 2 --samples 4000 --seed 31 --stacks 40
spool=$work/shared/out.spulse
"$drain_san" --debugfs "$work/shared/spulse" -o "$spool" --once \
	--kallsyms "$work/shared/kallsyms" 2>"$work/shared/err"
rc=$?
if [ $rc -ne 0 ]; then
	fail shared-stacks-two-processes "exit $rc: $(cat "$work/shared/err")"
elif ! v=$("$verify" "$spool" "$work/shared/truth" 2>&1); then
	fail shared-stacks-two-processes "$v"
else
	pass "shared-stacks-two-processes ($v)"
fi

# ---- python3-like: deep stacks over many modules ----------------------
# --depth 30 --modules 80: a new deep stack most samples, user frames in 83
# modules of the target (the Recorder's module index resolves them, the
# scan did before), off-CPU intervals whose stacks repeat (--offcpu-stacks),
# an exec over a retired range. Both builds must match the truth and write
# the same bytes. The merge's rule 3 follows the wall clock (a sample held
# for a window of wall time, docs/DRAIN.md "Merging"): under load the
# sanitizer build, slower, released other batches than the optimized one
# and grouped their samples otherwise. A window of an hour leaves the
# releases to the data (rule 1, then the end), the same for both.
fake deep --cpus 3 --samples 6000 --seed 41 --depth 30 --modules 80 \
	--offcpu 600 --offcpu-stacks 20 --exec-module
for pair in "san:$drain_san" "opt:$drain_opt"; do
	tag=${pair%%:*}
	d=${pair#*:}
	"$d" --debugfs "$work/deep/spulse" -o "$work/deep/out-$tag.spulse" --once \
		--window-ms 3600000 --no-kallsyms 2>"$work/deep/err-$tag"
	rc=$?
	if [ $rc -ne 0 ]; then
		fail "deep-stacks-many-modules-$tag" "exit $rc: $(cat "$work/deep/err-$tag")"
	elif ! v=$("$verify" "$work/deep/out-$tag.spulse" "$work/deep/truth" 2>&1); then
		fail "deep-stacks-many-modules-$tag" "$v"
	else
		pass "deep-stacks-many-modules-$tag ($v)"
	fi
done
if cmp -s "$work/deep/out-san.spulse" "$work/deep/out-opt.spulse"; then
	pass deep-stacks-same-output-san-and-optimized
else
	fail deep-stacks-same-output-san-and-optimized "spools differ"
fi

spool=$work/basic/out-san.spulse
err=$work/basic/err-san
# final stats line: samples, per-CPU bytes, errors, kernel-reported drops
want_samples=$(grep -c '^S ' "$work/basic/truth")
if grep -q "^spulse-drain: $want_samples samples written to .* cpu0 [1-9][0-9]* cpu1 [1-9][0-9]* cpu2 [1-9][0-9]* cpu3 0 bytes; stream errors 0; truncated tails 0; late 0; kernel dropped 7$" "$err"; then
	pass stats-line
else
	fail stats-line "$(tail -1 "$err")"
fi
# FILE.kallsyms: the text symbols only, unchanged
if [ -f "$spool.kallsyms" ] &&
	diff -q <(awk '$2 == "t" || $2 == "T"' "$work/basic/kallsyms") "$spool.kallsyms" >/dev/null &&
	[ "$(wc -l <"$spool.kallsyms")" -eq 4 ]; then
	pass kallsyms-copy
else
	fail kallsyms-copy "$(cat "$spool.kallsyms" 2>&1)"
fi
# the drained spool is byte-identical between the two builds
if cmp -s "$work/basic/out-san.spulse" "$work/basic/out-opt.spulse"; then
	pass same-output-san-and-optimized
else
	fail same-output-san-and-optimized "spools differ"
fi

# ---- many CPUs, many samples ------------------------------------------
fake many --cpus 16 --idle 3 --samples 2000 --seed 5
if "$drain_san" --debugfs "$work/many/spulse" -o "$work/many/out.spulse" --once \
	--no-kallsyms 2>"$work/many/err" &&
	v=$("$verify" "$work/many/out.spulse" "$work/many/truth" 2>&1); then
	pass "once-16cpus ($v)"
else
	fail once-16cpus "${v:-$(cat "$work/many/err")}"
fi

# ---- files that grow while the drainer runs (SIGTERM to stop) --------
rm -rf "$work/grow"
mkdir -p "$work/grow/spulse"
"$gen" --dir "$work/grow/spulse" --truth "$work/grow/truth" --cpus 3 --idle 1 \
	--samples 3000 --steps 30 --step-ms 30 --seed 3 &
genpid=$!
wait_for "$work/grow/spulse/meta"
"$drain_san" --debugfs "$work/grow/spulse" -o "$work/grow/out.spulse" \
	--no-kallsyms --sync-ms 100 2>"$work/grow/err" &
dpid=$!
wait $genpid
sleep 0.3
kill -TERM $dpid
wait $dpid
rc=$?
if [ $rc -ne 0 ]; then
	fail grow-sigterm "exit $rc: $(cat "$work/grow/err")"
elif ! v=$("$verify" "$work/grow/out.spulse" "$work/grow/truth" 2>&1); then
	fail grow-sigterm "$v"
else
	pass "grow-sigterm ($v)"
fi

# ---- a drainer that did not stop the module (no --control) and whose
# inputs keep growing still ends soon after SIGTERM (finish reads for at
# most 1 s then), and what it wrote is a valid prefix ---------------------
rm -rf "$work/passive"
mkdir -p "$work/passive/spulse"
"$gen" --dir "$work/passive/spulse" --truth "$work/passive/truth" --cpus 2 \
	--samples 20000 --steps 1000 --step-ms 5 --seed 5 &
genpid=$!
wait_for "$work/passive/spulse/meta"
"$drain_san" --debugfs "$work/passive/spulse" -o "$work/passive/out.spulse" \
	--no-kallsyms --wake-ms 5 2>"$work/passive/err" &
dpid=$!
sleep 0.5
start=$(date +%s%N)
kill -TERM $dpid
wait $dpid
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
still=$(kill -0 $genpid 2>/dev/null && echo yes || echo no)
kill $genpid 2>/dev/null; wait $genpid 2>/dev/null
if [ $rc -eq 0 ] && [ "$still" = yes ] && [ $ms -lt 3000 ] &&
	"$build/spulse" check "$work/passive/out.spulse" >/dev/null 2>&1; then
	pass "passive-finish-ends-while-inputs-grow ($ms ms)"
else
	fail passive-finish-ends-while-inputs-grow "exit $rc after $ms ms, writer still running: $still: $(tail -n 3 "$work/passive/err")"
fi

# ---- a CPU stream cut inside its last record: complete prefix drains ---
fake cut --cpus 3 --samples 500 --seed 4 --cut-cpu 1 --offcpu 50
if "$drain_san" --debugfs "$work/cut/spulse" -o "$work/cut/out.spulse" --once \
	--no-kallsyms 2>"$work/cut/err" &&
	grep -q '^spulse-drain: cpu1: stream ends inside a record at offset' "$work/cut/err" &&
	v=$("$verify" "$work/cut/out.spulse" "$work/cut/truth" 2>&1); then
	pass "cut-cpu-stream ($v)"
else
	fail cut-cpu-stream "${v:-$(cat "$work/cut/err")}"
fi

# ... and one cut inside an off-CPU interval (after its definitions)
fake cuti --cpus 3 --samples 500 --seed 5 --cut-cpu 2 --cut-in-interval --offcpu 50
if "$drain_san" --debugfs "$work/cuti/spulse" -o "$work/cuti/out.spulse" --once \
	--no-kallsyms 2>"$work/cuti/err" &&
	grep -q '^spulse-drain: cpu2: stream ends inside a record at offset' "$work/cuti/err" &&
	v=$("$verify" "$work/cuti/out.spulse" "$work/cuti/truth" 2>&1); then
	pass "cut-inside-interval ($v)"
else
	fail cut-inside-interval "${v:-$(cat "$work/cuti/err")}"
fi

# ---- a corrupt CPU stream: reported with cpu and offset, abandoned -----
fake bad --cpus 3 --samples 500 --seed 9 --corrupt-cpu 2 --offcpu 50
off=$(awk '$1 == "X" && $2 == "corrupt" { print $4 }' "$work/bad/truth")
"$drain_san" --debugfs "$work/bad/spulse" -o "$work/bad/out.spulse" --once \
	--no-kallsyms 2>"$work/bad/err"
rc=$?
if [ $rc -eq 3 ] &&
	grep -q "^spulse-drain: cpu2: offset $off: .*stream abandoned" "$work/bad/err" &&
	grep -q 'stream errors 1;' "$work/bad/err" &&
	v=$("$verify" "$work/bad/out.spulse" "$work/bad/truth" 2>&1); then
	pass "corrupt-cpu-abandoned ($v)"
else
	fail corrupt-cpu-abandoned "exit $rc (want 3), offset $off: ${v:-} $(cat "$work/bad/err")"
fi

# ---- epochs: per-CPU streams whose ids restart (FORMAT.md section 7) -----
# The same run with and without epochs (gen_fake --epoch-ids: a new stream
# header and ids from 0 whenever a CPU's ids reach N, as spulse.ko does at
# its epoch limit) must drain to the same content with ids that do not
# grow with the epochs: every redefinition maps to the spool id its content
# already has. The two spools hold the same frames and threads and, within
# 1%, the same stacks (not byte for byte: meta records carry no time, so
# where the dead module's records fall between samples follows the read
# rounds, which differ when the epoch run's streams are longer; a stack
# over that module's frames is then defined under relative and absolute
# frames). Without the mapping the epoch run would define every id again
# per epoch (hundreds of times more).
fake epp --cpus 3 --idle 1 --samples 2000 --seed 21 --offcpu 100 --manual-at 700
fake epe --cpus 3 --idle 1 --samples 2000 --seed 21 --offcpu 100 --manual-at 700 \
	--epoch-ids 60
nep=$(awk '$1 == "E" && $2 == "epochs" { print $3 }' "$work/epe/truth")
for x in epp epe; do
	"$drain_san" --debugfs "$work/$x/spulse" -o "$work/$x/out.spulse" --once \
		--no-kallsyms 2>"$work/$x/err"
	echo $? >"$work/$x/rc"
	"$spulse" dump "$work/$x/out.spulse" 2>/dev/null |
		awk '{ n[$1]++ } END { print n["frame"] + 0, n["thread"] + 0, n["stack"] + 0, n["sample"] + 0 }' \
		>"$work/$x/defs"
done
read -r fp tp sp np <"$work/epp/defs"
read -r fe te se ne <"$work/epe/defs"
if [ "$(cat "$work/epp/rc") $(cat "$work/epe/rc")" = "0 0" ] && [ "${nep:-0}" -gt 100 ] &&
	grep -q "^spulse-drain: kernel stream epochs $nep (" "$work/epe/err" &&
	grep -q 'stream errors 0; truncated tails 0; late 0;' "$work/epe/err" &&
	v=$("$verify" "$work/epe/out.spulse" "$work/epe/truth" 2>&1) &&
	[ "$np" -gt 0 ] && [ "$np" = "$ne" ] && [ "$fp" = "$fe" ] && [ "$tp" = "$te" ] &&
	[ "$se" -ge "$sp" ] && [ $((se - sp)) -le $((sp / 100)) ]; then
	pass "epochs-renumbered-same-spool ($nep epochs; $v; frames $fe/$fp threads $te/$tp stacks $se/$sp with/without epochs)"
else
	fail epochs-renumbered-same-spool "rc $(cat "$work/epp/rc") $(cat "$work/epe/rc") epochs ${nep:-?} defs with $fe $te $se $ne without $fp $tp $sp $np ${v:-}: $(tail -3 "$work/epe/err")"
fi
# ... while the files grow (headers cut by the drainer's reads), SIGTERM
rm -rf "$work/epg"
mkdir -p "$work/epg/spulse"
"$gen" --dir "$work/epg/spulse" --truth "$work/epg/truth" --cpus 3 --idle 1 \
	--samples 3000 --steps 30 --step-ms 20 --seed 23 --offcpu 60 --epoch-ids 45 &
genpid=$!
wait_for "$work/epg/spulse/meta"
"$drain_san" --debugfs "$work/epg/spulse" -o "$work/epg/out.spulse" \
	--no-kallsyms --sync-ms 100 2>"$work/epg/err" &
dpid=$!
wait $genpid
sleep 0.3
kill -TERM $dpid
wait $dpid
rc=$?
nep=$(awk '$1 == "E" && $2 == "epochs" { print $3 }' "$work/epg/truth")
if [ $rc -eq 0 ] && grep -q "^spulse-drain: kernel stream epochs $nep (" "$work/epg/err" &&
	v=$("$verify" "$work/epg/out.spulse" "$work/epg/truth" 2>&1); then
	pass "epochs-grow-sigterm ($nep epochs; $v)"
else
	fail epochs-grow-sigterm "exit $rc epochs ${nep:-?}: ${v:-} $(tail -3 "$work/epg/err")"
fi
# ... a corrupt byte after many epochs is reported at its file offset
fake epc --cpus 3 --samples 500 --seed 9 --corrupt-cpu 2 --offcpu 50 --epoch-ids 40
off=$(awk '$1 == "X" && $2 == "corrupt" { print $4 }' "$work/epc/truth")
"$drain_san" --debugfs "$work/epc/spulse" -o "$work/epc/out.spulse" --once \
	--no-kallsyms 2>"$work/epc/err"
rc=$?
if [ $rc -eq 3 ] &&
	grep -q "^spulse-drain: cpu2: offset $off: .*stream abandoned" "$work/epc/err" &&
	v=$("$verify" "$work/epc/out.spulse" "$work/epc/truth" 2>&1); then
	pass "epochs-corrupt-offset-in-file ($v)"
else
	fail epochs-corrupt-offset-in-file "exit $rc (want 3), offset $off: ${v:-} $(cat "$work/epc/err")"
fi
# ... and in flight mode (each generation is a spool of its own)
fake epf --cpus 3 --samples 20000 --seed 15 --offcpu 1000 --manual-at 12000 --epoch-ids 300
"$drain_san" --debugfs "$work/epf/spulse" -o "$work/epf/c.spulse" --no-kallsyms --once \
	--flight 8 --post 2 --gen-bytes 200000 2>"$work/epf/err"
rc=$?
if [ $rc -eq 0 ] && grep -q '^spulse-drain: kernel stream epochs [1-9]' "$work/epf/err" &&
	v=$("$verify" "$work/epf/c-001.spulse" "$work/epf/truth" --window --expect-reason 1 2>&1); then
	pass "epochs-flight-dump-exact ($v)"
else
	fail epochs-flight-dump-exact "exit $rc: ${v:-} $(tail -3 "$work/epf/err")"
fi

# ---- --control writes start, then stop (+flush) -------------------------
fake ctl --cpus 2 --samples 50 --seed 2
if "$drain_san" --debugfs "$work/ctl/spulse" -o "$work/ctl/out.spulse" --once \
	--control --no-kallsyms 2>"$work/ctl/err" &&
	[ "$(cat "$work/ctl/spulse/control")" = "$(printf 'start\nstop\nflush')" ] &&
	"$verify" "$work/ctl/out.spulse" "$work/ctl/truth" >/dev/null 2>&1; then
	pass control-start-stop
else
	fail control-start-stop "control: $(od -c "$work/ctl/spulse/control" | head -3)"
fi

# ---- --duration stops by itself; SIGINT stops -----------------------------
fake dur --cpus 2 --samples 300 --seed 6
start=$(date +%s%N)
if "$drain_san" --debugfs "$work/dur/spulse" -o "$work/dur/out.spulse" \
	--duration 0.5 --no-kallsyms 2>"$work/dur/err" &&
	v=$("$verify" "$work/dur/out.spulse" "$work/dur/truth" 2>&1); then
	pass "duration ($v, $((($(date +%s%N) - start) / 1000000)) ms)"
else
	fail duration "${v:-$(cat "$work/dur/err")}"
fi
"$drain_san" --debugfs "$work/dur/spulse" -o "$work/dur/int.spulse" \
	--no-kallsyms 2>"$work/dur/err2" &
dpid=$!
# a background job starts with SIGINT ignored until the drainer installs its
# handler, which it does before it creates the spool: wait for that (under
# load an ASan start took longer than the 0.5 s alone, and the drainer ran on)
for _ in $(seq 1000); do [ -e "$work/dur/int.spulse" ] && break; sleep 0.01; done
sleep 0.5
kill -INT $dpid
wait $dpid
rc=$?
if [ $rc -eq 0 ] && v=$("$verify" "$work/dur/int.spulse" "$work/dur/truth" 2>&1); then
	pass "sigint ($v)"
else
	fail sigint "exit $rc ${v:-} $(cat "$work/dur/err2")"
fi

# ---- a retirement read mid-stream applies to later samples only ----------
# (files larger than one 256 KiB read round: meta's module deactivation is
# read after the first round, so the frames in the retired module must be
# module-relative first, then absolute, in spool order and in time order)
fake big --cpus 3 --samples 20000 --seed 15
if "$drain_opt" --debugfs "$work/big/spulse" -o "$work/big/out.spulse" --once \
	--no-kallsyms 2>"$work/big/err" &&
	v=$("$verify" "$work/big/out.spulse" "$work/big/truth" --expect-switch \
		--switch-in-time-order 2>&1); then
	pass "deactivation-applies-in-order ($v)"
else
	fail deactivation-applies-in-order "${v:-$(cat "$work/big/err")}"
fi

# ---- grouped writes: a cpu record per CPU group, not per CPU switch -------
# release() writes what the merge releases grouped by CPU (docs/DRAIN.md,
# "Merging"); SPULSE_DRAIN_MERGE_ORDER=1 writes the merge's order instead, as
# the drainer did before. group_both NAME drains fake NAME both ways (the
# ASan build) into NAME/grouped.spulse and NAME/merge.spulse, with their cpu
# record counts in NAME/cpu-MODE and perf-script exports in NAME/MODE.ps
# (exported samples sorted by time, each with its CPU, thread and every
# frame resolved: module-relative frames name their module).
group_both() {
	local name=$1 mode
	for mode in grouped merge; do
		local env=
		[ $mode = merge ] && env=1
		SPULSE_DRAIN_MERGE_ORDER=$env "$drain_san" --debugfs "$work/$name/spulse" \
			-o "$work/$name/$mode.spulse" --once --no-kallsyms \
			2>"$work/$name/err-$mode"
		echo $? >"$work/$name/rc-$mode"
		"$spulse" check "$work/$name/$mode.spulse" 2>/dev/null |
			awk '$1 == "cpu-records" { print $2 }' >"$work/$name/cpu-$mode"
		"$spulse" export "$work/$name/$mode.spulse" --format perf-script \
			-o "$work/$name/$mode.ps" 2>/dev/null
	done
}
# Two CPUs whose samples alternate in time (periods 1.000 and 1.037 ms),
# with off-CPU intervals and a trigger mark, several read rounds long: the
# merge's order switches CPU at nearly every sample, the grouped spool only
# per group. Both hold the truth exactly (every sample's time, CPU, thread
# and frames; every interval; the mark), each CPU's samples in order, the
# merge-order one also in time order and the grouped one not (so it was
# grouped); both hold the same samples resolved the same way.
fake alt --cpus 2 --samples 6000 --seed 51 --offcpu 300 --manual-at 3000
group_both alt
n=$(grep -c '^S ' "$work/alt/truth")
cg=$(cat "$work/alt/cpu-grouped")
cm=$(cat "$work/alt/cpu-merge")
if [ "$(cat "$work/alt/rc-grouped") $(cat "$work/alt/rc-merge")" = "0 0" ] &&
	grep -q 'stream errors 0; truncated tails 0; late 0;' "$work/alt/err-grouped" &&
	grep -q 'stream errors 0; truncated tails 0; late 0;' "$work/alt/err-merge" &&
	v=$("$verify" "$work/alt/grouped.spulse" "$work/alt/truth" 2>&1) &&
	vm=$("$verify" "$work/alt/merge.spulse" "$work/alt/truth" --time-order 2>&1) &&
	! "$verify" "$work/alt/grouped.spulse" "$work/alt/truth" --time-order >/dev/null 2>&1 &&
	[ -n "$cg" ] && [ -n "$cm" ] && [ $((cm * 2)) -ge "$n" ] && [ $((cg * 100)) -le "$n" ] &&
	[ -s "$work/alt/grouped.ps" ] && cmp -s "$work/alt/grouped.ps" "$work/alt/merge.ps"; then
	pass "grouped-cpu-records-per-group ($n samples: cpu records $cg grouped, $cm in merge order; $(stat -c %s "$work/alt/grouped.spulse") vs $(stat -c %s "$work/alt/merge.spulse") bytes; $v)"
else
	fail grouped-cpu-records-per-group "rc $(cat "$work/alt/rc-grouped") $(cat "$work/alt/rc-merge") cpu records grouped ${cg:-?} merge ${cm:-?} of $n samples; ${v:-} ${vm:-}; $(tail -1 "$work/alt/err-grouped")"
fi
# A module defined mid-stream behind a retirement (gen_fake --exec-module:
# meta retires /tmp/gone.so and maps /tmp/new.so over its range, read in
# the first round and held until the samples read by then are written):
# the groups are cut where the held records apply, so every sample before
# that time resolves in gone.so and every later one in new.so, in spool
# order and in time order, and exactly the same samples as in the merge's
# order (identical exports).
fake exec --cpus 2 --samples 12000 --seed 52 --exec-module
group_both exec
if [ "$(cat "$work/exec/rc-grouped") $(cat "$work/exec/rc-merge")" = "0 0" ] &&
	v=$("$verify" "$work/exec/grouped.spulse" "$work/exec/truth" --expect-switch \
		--switch-in-time-order 2>&1) &&
	vm=$("$verify" "$work/exec/merge.spulse" "$work/exec/truth" --expect-switch \
		--switch-in-time-order --time-order 2>&1) &&
	[ -s "$work/exec/grouped.ps" ] && cmp -s "$work/exec/grouped.ps" "$work/exec/merge.ps" &&
	[ "$(cat "$work/exec/cpu-grouped")" -lt "$(cat "$work/exec/cpu-merge")" ]; then
	pass "grouped-held-module-between-the-same-samples ($v)"
else
	fail grouped-held-module-between-the-same-samples "rc $(cat "$work/exec/rc-grouped") $(cat "$work/exec/rc-merge"): ${v:-} ${vm:-} $(cmp "$work/exec/grouped.ps" "$work/exec/merge.ps" 2>&1)"
fi

# A write error inside a group (a 64 KiB file size limit, SIGXFSZ ignored:
# EFBIG at the Recorder's first 256 KiB write, which with 8 CPUs' first
# rounds comes while a 4,096-item group is being written, with trigger
# marks of CPU 0 still in it): the drainer stops with exit 1, and the
# ASan build frees every item it had collected (trigger texts) exactly once.
fake wfail --cpus 8 --samples 5000 --seed 5 --offcpu 200 --manual-at 900 \
	--manual-at 1000 --manual-at 1100 --manual-at 1200 --manual-at 1300
(
	trap '' XFSZ
	ulimit -f 64
	exec "$drain_san" --debugfs "$work/wfail/spulse" -o "$work/wfail/out.spulse" \
		--once --no-kallsyms
) 2>"$work/wfail/err"
rc=$?
if [ $rc -eq 1 ] && grep -q 'stopped on an error: File too large' "$work/wfail/err" &&
	! grep -q 'Sanitizer' "$work/wfail/err" &&
	"$verify" "$work/wfail/out.spulse" "$work/wfail/truth" --prefix >/dev/null 2>&1; then
	pass write-error-mid-group-frees-its-items
else
	fail write-error-mid-group-frees-its-items "exit $rc: $(grep -v unwind "$work/wfail/err" | head -5)"
fi

# ---- kill -9 at random points: the spool's complete prefix reads back ---
fake k9 --cpus 4 --samples 40000 --seed 8
for i in 1 2 3 4 5 6; do
	spool=$work/k9/out$i.spulse
	"$drain_opt" --debugfs "$work/k9/spulse" -o "$spool" --once \
		--no-kallsyms --sync-ms 10 2>/dev/null &
	dpid=$!
	# from the moment the spool exists (it is created at start)
	wait_for "$spool"
	sleep "0.$(printf '%03d' $((RANDOM % 400)))"
	kill -9 $dpid 2>/dev/null
	wait $dpid 2>/dev/null
	if v=$("$verify" "$spool" "$work/k9/truth" --prefix 2>&1); then
		pass "kill9-prefix-$i ($v, $(stat -c %s "$spool") bytes)"
	else
		fail "kill9-prefix-$i" "$v"
	fi
done

# ---- inputs whose reads fail (as relay files after rmmod: EIO) -----------
# a directory stands in: read() fails with EISDIR; the drainer closes each
# input, reports it, and stops by itself once none is left
mkdir -p "$work/gone/spulse/cpu0" "$work/gone/spulse/cpu1" "$work/gone/spulse/meta"
timeout 20 "$drain_san" --debugfs "$work/gone/spulse" -o "$work/gone/out.spulse" \
	--no-kallsyms 2>"$work/gone/err"
rc=$?
if [ $rc -eq 0 ] && grep -q 'cpu1: read: Is a directory; input closed' "$work/gone/err" &&
	grep -q 'every input is closed; stopping' "$work/gone/err" &&
	"$verify" "$work/gone/out.spulse" /dev/null --prefix >/dev/null 2>&1; then
	pass inputs-closed-stops
else
	fail inputs-closed-stops "exit $rc: $(cat "$work/gone/err")"
fi

# ---- usage and environment errors ----------------------------------------
"$drain_san" --debugfs "$work/basic/spulse" >/dev/null 2>&1
[ $? -eq 2 ] && pass usage-no-output || fail usage-no-output "exit not 2"
"$drain_san" -o "$work/x.spulse" --window-ms abc >/dev/null 2>&1
[ $? -eq 2 ] && pass usage-bad-number || fail usage-bad-number "exit not 2"
"$drain_san" -o "$work/x.spulse" --debugfs "$work/nonexistent" --once >/dev/null 2>&1
[ $? -eq 1 ] && pass missing-debugfs || fail missing-debugfs "exit not 1"

# an output that cannot be created is refused at start, naming it
"$drain_san" -o "$work/no/such/dir/x.spulse" --debugfs "$work/basic/spulse" --once \
	>/dev/null 2>"$work/noout.err"
rc=$?
if [ $rc -eq 1 ] && grep -q "no/such/dir/x.spulse: No such file or directory" "$work/noout.err"; then
	pass output-not-creatable-refused
else
	fail output-not-creatable-refused "exit $rc: $(cat "$work/noout.err")"
fi

# killed before any stream header: no file, not an empty one (an empty file
# is not a spool: readers stop at offset 0 inside the header); an older
# file of that name is left as it was
rm -rf "$work/nohdr"
mkdir -p "$work/nohdr/spulse"
: > "$work/nohdr/spulse/cpu0"
: > "$work/nohdr/spulse/meta"
for old in none kept; do
	rm -f "$work/nohdr/out.spulse"
	[ $old = none ] || cp "$work/grow/out.spulse" "$work/nohdr/out.spulse"
	"$drain_san" --debugfs "$work/nohdr/spulse" -o "$work/nohdr/out.spulse" \
		--no-kallsyms 2>"$work/nohdr/err" &
	dpid=$!
	sleep 0.5
	kill -9 $dpid; wait $dpid 2>/dev/null
	if [ $old = none ] && [ ! -e "$work/nohdr/out.spulse" ]; then
		pass killed-before-header-leaves-no-file
	elif [ $old = kept ] && cmp -s "$work/grow/out.spulse" "$work/nohdr/out.spulse"; then
		pass killed-before-header-keeps-older-file
	else
		fail "killed-before-header ($old)" "$(ls -l "$work/nohdr/out.spulse" 2>&1)"
	fi
done

# ---- spulse record (cmd_record through a test main) ---------------------
rec=$bin/record
for args in "-F 0" "-F abc" "-p 1 -- true" "-d -1" "--event bogus" "-p 0" "extra"; do
	# shellcheck disable=SC2086
	"$rec" $args >/dev/null 2>&1
	rc=$?
	[ $rc -eq 2 ] && pass "record-usage '$args'" || fail "record-usage '$args'" "exit $rc"
done
# --module-params: refused before anything is loaded when empty, holding a
# control character, naming a key record sets itself, or with --no-load
for mp in "" "  " "freq=5" "subbuf_size=65536 target_pid=3" "offcpu" \
	"$(printf 'sample_null=1\nfreq=2')" "--no-load sample_null=1"; do
	if [ "${mp#--no-load }" != "$mp" ]; then
		"$rec" --no-load --module-params "${mp#--no-load }" -- true >/dev/null 2>&1
	else
		"$rec" --module-params "$mp" -- true >/dev/null 2>&1
	fi
	rc=$?
	[ $rc -eq 2 ] && pass "record-usage-module-params '$mp'" ||
		fail "record-usage-module-params '$mp'" "exit $rc"
done
fake rec --cpus 2 --samples 200 --seed 12
out=$("$rec" --debugfs "$work/rec/spulse" --no-load -o "$work/rec/out.spulse" \
	--kallsyms "$work/rec/kallsyms" -- sh -c 'sleep 0.2; exit 0' 2>&1)
rc=$?
if [ $rc -eq 0 ] && grep -q "samples $(grep -c '^S ' "$work/rec/truth")," <<<"$out" &&
	grep -q "file $work/rec/out.spulse" <<<"$out" &&
	[ "$(cat "$work/rec/spulse/control")" = "$(printf 'start\nstop\nflush')" ] &&
	v=$("$verify" "$work/rec/out.spulse" "$work/rec/truth" 2>&1) &&
	[ -s "$work/rec/out.spulse.kallsyms" ]; then
	pass "record-command-fake-debugfs ($v)"
else
	fail record-command-fake-debugfs "exit $rc: $out ${v:-}"
fi

# -p PID: stops when the process exits
fake recp --cpus 2 --samples 100 --seed 13
sleep 0.4 &
spid=$!
start=$(date +%s%N)
out=$("$rec" --debugfs "$work/recp/spulse" --no-load -o "$work/recp/out.spulse" \
	--kallsyms "$work/recp/kallsyms" -p $spid 2>&1)
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
wait $spid
if [ $rc -eq 0 ] && [ $ms -lt 5000 ] &&
	v=$("$verify" "$work/recp/out.spulse" "$work/recp/truth" 2>&1); then
	pass "record-pid-exit ($v, stopped after $ms ms)"
else
	fail record-pid-exit "exit $rc after $ms ms: $out ${v:-}"
fi
# -d: whole-system recording stops after the duration
start=$(date +%s%N)
out=$("$rec" --debugfs "$work/recp/spulse" --no-load -o "$work/recp/d.spulse" \
	--kallsyms "$work/recp/kallsyms" -d 0.3 2>&1)
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
if [ $rc -eq 0 ] && [ $ms -ge 300 ] && [ $ms -lt 5000 ] &&
	"$verify" "$work/recp/d.spulse" "$work/recp/truth" >/dev/null 2>&1; then
	pass "record-duration ($ms ms)"
else
	fail record-duration "exit $rc after $ms ms: $out"
fi
# -- CMD that does not exist: the child reports it, the spool is still valid
out=$("$rec" --debugfs "$work/recp/spulse" --no-load -o "$work/recp/n.spulse" \
	--kallsyms "$work/recp/kallsyms" -- /nonexistent/cmd 2>&1)
rc=$?
if [ $rc -eq 0 ] && grep -q 'nonexistent/cmd' <<<"$out" &&
	"$verify" "$work/recp/n.spulse" "$work/recp/truth" >/dev/null 2>&1; then
	pass record-missing-command
else
	fail record-missing-command "exit $rc: $out"
fi

# -- CMD still running at the end of -d: SIGTERM, then SIGKILL if ignored
start=$(date +%s%N)
out=$("$rec" --debugfs "$work/recp/spulse" --no-load -o "$work/recp/k.spulse" \
	--kallsyms "$work/recp/kallsyms" -d 0.3 -- sh -c 'trap "" TERM; while :; do sleep 0.1; done' 2>&1)
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
if [ $rc -eq 0 ] && [ $ms -lt 10000 ] && grep -q 'stopped by duration' <<<"$out"; then
	pass "record-duration-ends-command ($ms ms)"
else
	fail record-duration-ends-command "exit $rc after $ms ms: $out"
fi

# ---- THP: the recorder keeps its memory out of THP, its command does not --
# (docs/DRAIN.md "The recorder's memory and THP"). The command must see
# what this shell has (PR_SET_THP_DISABLE is inherited across exec), the
# recorder (the command's parent while it runs) 0. /proc/PID/status has
# the THP_enabled line since Linux 5.0 with CONFIG_TRANSPARENT_HUGEPAGE.
thp_of() { sed -n 's/^THP_enabled:[[:space:]]*//p' "$1" 2>/dev/null; }
thp_mine=$(thp_of /proc/self/status)
if [ -z "$thp_mine" ]; then
	echo "SKIP record-thp, drain-thp: no THP_enabled line in /proc/self/status"
else
	fake thp --cpus 2 --samples 50 --seed 31
	out=$("$rec" --debugfs "$work/thp/spulse" --no-load -o "$work/thp/out.spulse" \
		--kallsyms "$work/thp/kallsyms" -- sh -c \
		'sed -n "s/^THP_enabled:[[:space:]]*/command /p" /proc/self/status
		 sed -n "s/^THP_enabled:[[:space:]]*/recorder /p" /proc/$PPID/status' 2>&1)
	rc=$?
	if [ $rc -eq 0 ] && grep -qx "command $thp_mine" <<<"$out" &&
		grep -qx "recorder 0" <<<"$out"; then
		pass "record-thp-off-command-as-found (command $thp_mine)"
	else
		fail record-thp-off-command-as-found "exit $rc, this shell $thp_mine: $out"
	fi
	# spulse-drain: off once it runs (its spool exists: past the prctl)
	"$drain_opt" --debugfs "$work/thp/spulse" -o "$work/thp/d.spulse" \
		--no-kallsyms --duration 600 2>"$work/thp/derr" &
	dpid=$!
	for _ in $(seq 3000); do
		[ -e "$work/thp/d.spulse" ] || ! kill -0 $dpid 2>/dev/null && break
		sleep 0.01
	done
	dthp=$(thp_of /proc/$dpid/status)
	kill -INT $dpid 2>/dev/null
	wait $dpid
	rc=$?
	if [ "$dthp" = 0 ] && [ $rc -eq 0 ]; then
		pass drain-thp-off
	else
		fail drain-thp-off "THP_enabled '${dthp}' (this shell $thp_mine), exit $rc: $(cat "$work/thp/derr")"
	fi
fi

# ---- live progress only on a terminal -----------------------------------
fake tty --cpus 2 --samples 100 --seed 14
if command -v script >/dev/null; then
	script -qec "$drain_opt --debugfs $work/tty/spulse -o $work/tty/out.spulse --no-kallsyms --duration 1.6" \
		/dev/null >"$work/tty/log" 2>&1
	"$drain_opt" --debugfs "$work/tty/spulse" -o "$work/tty/out2.spulse" \
		--no-kallsyms --duration 1.6 2>"$work/tty/log2"
	if grep -q 'samples/s, dropped 7' "$work/tty/log" &&
		! grep -q 'samples/s' "$work/tty/log2"; then
		pass progress-only-on-tty
	else
		fail progress-only-on-tty "tty: $(tr '\r' '\n' <"$work/tty/log" | head -3) / pipe: $(head -2 "$work/tty/log2")"
	fi
fi

# ---- extension records: cpu per sample, off-CPU intervals, triggers -------
# intervals (waker stacks up to ~350 frames, wakers of another process) must
# survive merge and renumbering with identical content; each sample keeps
# its stream's CPU; a kernel trigger mark passes through; unknown extension
# kinds are counted and dropped
fake ext --cpus 4 --idle 1 --samples 4000 --seed 21 --offcpu 400 \
	--stall 2000:80 --manual-at 3000 --unknown-ext
want_iv=$(grep -c '^O ' "$work/ext/truth")
for pair in "san:$drain_san" "opt:$drain_opt"; do
	tag=${pair%%:*}
	d=${pair#*:}
	"$d" --debugfs "$work/ext/spulse" -o "$work/ext/out-$tag.spulse" --once \
		--no-kallsyms 2>"$work/ext/err-$tag"
	rc=$?
	if [ $rc -ne 0 ]; then
		fail "offcpu-merge-$tag" "exit $rc: $(cat "$work/ext/err-$tag")"
	elif ! v=$("$verify" "$work/ext/out-$tag.spulse" "$work/ext/truth" 2>&1); then
		fail "offcpu-merge-$tag" "$v"
	elif ! grep -q "^spulse-drain: off-CPU intervals $want_iv, trigger marks 1, unknown extension records dropped 3$" "$work/ext/err-$tag"; then
		fail "offcpu-merge-$tag" "stats: $(tail -2 "$work/ext/err-$tag")"
	else
		pass "offcpu-merge-$tag ($v)"
	fi
done
if cmp -s "$work/ext/out-san.spulse" "$work/ext/out-opt.spulse"; then
	pass offcpu-same-output-san-and-optimized
else
	fail offcpu-same-output-san-and-optimized "spools differ"
fi
# the verifier is not vacuous: another seed's truth is refused
fake ext2 --cpus 4 --idle 1 --samples 4000 --seed 22 --offcpu 400
if "$verify" "$work/ext/out-opt.spulse" "$work/ext2/truth" >/dev/null 2>&1; then
	fail verifier-refuses-wrong-truth "accepted"
else
	pass verifier-refuses-wrong-truth
fi
# streams of an older module (no cpu record): the CPU is the file's number
fake nocpu --cpus 3 --samples 800 --seed 23 --offcpu 80 --no-cpu-record
if "$drain_san" --debugfs "$work/nocpu/spulse" -o "$work/nocpu/out.spulse" --once \
	--no-kallsyms 2>"$work/nocpu/err" &&
	v=$("$verify" "$work/nocpu/out.spulse" "$work/nocpu/truth" 2>&1); then
	pass "cpu-from-file-number-without-cpu-record ($v)"
else
	fail cpu-from-file-number-without-cpu-record "${v:-$(cat "$work/nocpu/err")}"
fi
if [ -x "$build/spulse" ]; then
	if out=$("$build/spulse" check "$work/ext/out-opt.spulse" 2>&1); then
		pass "spulse-check-accepts-offcpu-spool"
	else
		fail spulse-check-accepts-offcpu-spool "$out"
	fi
fi

# ---- flight recorder ------------------------------------------------------
# bad specs and options are refused with a message (exit 2)
for args in "--trigger offcpu>50" "--trigger offcpu>abc" "--trigger runq>0ms" \
	"--trigger bogus" "--trigger offcpu>-5ms" "--flight 0" "--flight abc" \
	"--post 1" "--flight 1 --max-dumps 0" "--flight 1 --gen-bytes 10"; do
	# shellcheck disable=SC2086
	if [[ $args == --flight* ]]; then set -- $args; else set -- --flight 1 $args; fi
	[[ $args == "--post 1" ]] && set -- --post 1
	out=$("$drain_san" -o "$work/x.spulse" --once --debugfs "$work/ext/spulse" "$@" 2>&1)
	rc=$?
	if [ $rc -eq 2 ] && grep -qE "bad|need" <<<"$out"; then
		pass "flight-refuses '$*'"
	else
		fail "flight-refuses '$*'" "exit $rc: $out"
	fi
done

# a long simulated run (120 s of profile time, 4 CPUs, off-CPU intervals)
# through a 2 s flight ring: stalls at 20 s, 60 s, 61 s (within --min-gap of
# 60 s: suppressed) and 100 s; runq>900us never... fires on intervals too
fake fl --cpus 4 --samples 120000 --seed 31 --offcpu 6000 \
	--stall 20000:80 --stall 60000:120 --stall 61000:90 --stall 100000:200 \
	--steps 40 --step-ms 40
full_bytes=$(cat "$work"/fl/spulse/cpu* | wc -c)
"$drain_opt" --debugfs "$work/fl/spulse" -o "$work/fl/dump.spulse" --no-kallsyms \
	--flight 2 --post 0.5 --min-gap 3 --trigger 'offcpu>50ms' --gen-bytes 300000 \
	--duration 30 2>"$work/fl/err" &
dpid=$!
peak=0
rss_peak=0
while kill -0 $dpid 2>/dev/null; do
	sum=0
	for fd in /proc/$dpid/fd/*; do
		case $(readlink "$fd" 2>/dev/null) in
		*memfd:spulse-gen*) sum=$((sum + $(stat -L -c %s "$fd" 2>/dev/null || echo 0))) ;;
		esac
	done
	[ $sum -gt $peak ] && peak=$sum
	rss=$(awk '$1 == "VmRSS:" { print $2 }' /proc/$dpid/status 2>/dev/null)
	[ -n "$rss" ] && [ "$rss" -gt "$rss_peak" ] && rss_peak=$rss
	if grep -q 'dump 3:' "$work/fl/err" 2>/dev/null; then
		# every input is a regular file: stop once the data is in
		sleep 0.5
		kill -TERM $dpid 2>/dev/null
	fi
	sleep 0.05
done
wait $dpid
rc=$?
bound=$(sed -n 's/.*bound \([0-9]*\)).*/\1/p' "$work/fl/err")
most=$(sed -n 's/.*(most \([0-9]*\), bound.*/\1/p' "$work/fl/err")
if [ $rc -eq 0 ] && [ -n "$bound" ] && [ "$peak" -gt 0 ] && [ "$peak" -le "$bound" ] &&
	[ "$most" -le "$bound" ] && [ "$bound" -lt "$full_bytes" ]; then
	pass "flight-memory-bounded (memfd peak measured $peak bytes, drainer's own max $most, bound $bound, whole run $full_bytes bytes of streams, peak RSS ${rss_peak} kB)"
else
	fail flight-memory-bounded "exit $rc peak $peak most ${most:-?} bound ${bound:-?} full $full_bytes: $(tail -3 "$work/fl/err")"
fi
n=$(ls "$work"/fl/dump-*.spulse 2>/dev/null | wc -l)
if [ "$n" -eq 3 ] && [ -f "$work/fl/dump-001.spulse" ] && [ -f "$work/fl/dump-003.spulse" ] &&
	grep -q 'suppressed: within --min-gap' "$work/fl/err"; then
	pass "flight-numbered-dumps-and-min-gap (3 dumps, 1 suppressed)"
else
	fail flight-numbered-dumps-and-min-gap "$n dumps: $(grep trigger "$work/fl/err")"
fi
for i in 001 002 003; do
	if v=$("$verify" "$work/fl/dump-$i.spulse" "$work/fl/truth" --window \
		--expect-reason 3 --expect-stall 2>&1); then
		pass "flight-dump-$i-window-exact ($v)"
	else
		fail "flight-dump-$i-window-exact" "$v"
	fi
done
if [ -x "$build/spulse" ] && out=$("$build/spulse" check "$work/fl/dump-002.spulse" 2>&1); then
	pass flight-dump-passes-spulse-check
else
	fail flight-dump-passes-spulse-check "${out:-no spulse}"
fi

# a byte cap too small for the window: the oldest generations go, the dump
# says its window start moved, and it is exact for the window it names
fake flc --cpus 3 --samples 20000 --seed 15 --offcpu 1000 --manual-at 12000
"$drain_san" --debugfs "$work/flc/spulse" -o "$work/flc/c.spulse" --no-kallsyms --once \
	--flight 8 --post 2 --gen-bytes 200000 2>"$work/flc/err"
rc=$?
if [ $rc -eq 0 ] && grep -q 'dump 1: .*(start cut by the memory cap)' "$work/flc/err" &&
	v=$("$verify" "$work/flc/c-001.spulse" "$work/flc/truth" --window --expect-reason 1 2>&1) &&
	! grep -q 'window 4.001' <<<"$v"; then
	pass "flight-byte-cap-moves-window-start ($v)"
else
	fail flight-byte-cap-moves-window-start "exit $rc: $(cat "$work/flc/err") ${v:-}"
fi

# --max-dumps: four stalls, two dumps
fake flm --cpus 2 --samples 30000 --seed 32 --offcpu 500 \
	--stall 5000:60 --stall 12000:60 --stall 19000:60 --stall 26000:60
"$drain_san" --debugfs "$work/flm/spulse" -o "$work/flm/d" --no-kallsyms --once \
	--flight 1 --post 0.2 --trigger 'offcpu>55ms' --max-dumps 2 2>"$work/flm/err"
rc=$?
if [ $rc -eq 0 ] && [ -f "$work/flm/d-001" ] && [ -f "$work/flm/d-002" ] &&
	[ ! -e "$work/flm/d-003" ] && [ "$(grep -c 'suppressed: --max-dumps 2 reached' "$work/flm/err")" -eq 2 ] &&
	v=$("$verify" "$work/flm/d-002" "$work/flm/truth" --window --expect-stall 2>&1); then
	pass "flight-max-dumps ($v)"
else
	fail flight-max-dumps "exit $rc: $(cat "$work/flm/err") ${v:-}"
fi

# runq>DUR: the stalls have 1.5 ms of run-queue delay, regular intervals < 1 ms
"$drain_san" --debugfs "$work/flm/spulse" -o "$work/flm/r.spulse" --no-kallsyms --once \
	--flight 1 --post 0.2 --trigger 'runq>1200us' --min-gap 0 2>"$work/flm/err2"
rc=$?
if [ $rc -eq 0 ] && [ "$(ls "$work"/flm/r-*.spulse | wc -l)" -eq 4 ] &&
	v=$("$verify" "$work/flm/r-004.spulse" "$work/flm/truth" --window --expect-reason 4 2>&1); then
	pass "flight-runq-trigger ($v)"
else
	fail flight-runq-trigger "exit $rc: $(grep -E 'trigger|dump' "$work/flm/err2") ${v:-}"
fi

# manual: a kernel trigger mark (debugfs control "trigger") cuts a dump
fake flk --cpus 3 --samples 8000 --seed 33 --offcpu 300 --manual-at 5000
"$drain_san" --debugfs "$work/flk/spulse" -o "$work/flk/m.spulse" --no-kallsyms --once \
	--flight 1.5 --post 0.3 2>"$work/flk/err"
rc=$?
if [ $rc -eq 0 ] && [ -f "$work/flk/m-001.spulse" ] && [ ! -e "$work/flk/m-002.spulse" ] &&
	v=$("$verify" "$work/flk/m-001.spulse" "$work/flk/truth" --window --expect-reason 1 2>&1) &&
	grep -q ' 2 trigger records' <<<"$v"; then
	pass "flight-manual-kernel-mark ($v)"
else
	fail flight-manual-kernel-mark "exit $rc: $(cat "$work/flk/err") ${v:-}"
fi

# SIGUSR1 to a running spulse-drain: one dump, reason signal
rm -rf "$work/fls"
mkdir -p "$work/fls/spulse"
"$gen" --dir "$work/fls/spulse" --truth "$work/fls/truth" --cpus 2 --samples 20000 \
	--offcpu 400 --steps 20 --step-ms 60 --seed 34 &
genpid=$!
wait_for "$work/fls/spulse/meta"
# (a 1 s merge window: the ASan writer on a loaded machine can leave one CPU
# behind by more than the default 100 ms, whose samples would then be late)
"$drain_san" --debugfs "$work/fls/spulse" -o "$work/fls/s.spulse" --no-kallsyms \
	--window-ms 1000 --flight 2 --post 0.5 2>"$work/fls/err" &
dpid=$!
sleep 0.6
kill -USR1 $dpid
wait $genpid
sleep 0.5
kill -TERM $dpid
wait $dpid
rc=$?
if [ $rc -eq 0 ] && [ -f "$work/fls/s-001.spulse" ] && [ ! -e "$work/fls/s-002.spulse" ] &&
	v=$("$verify" "$work/fls/s-001.spulse" "$work/fls/truth" --window --expect-reason 2 2>&1); then
	pass "flight-sigusr1 ($v)"
else
	fail flight-sigusr1 "exit $rc: $(cat "$work/fls/err") ${v:-}"
fi

# spulse record: --off-cpu options, and --flight with a trigger, in process
for args in "--offcpu-min-us 5 -d 1" "--off-cpu --offcpu-min-us x -d 1" \
	"--flight 1 --trigger offcpu>5ms -d 1" "--trigger manual -d 1" "--flight 1 --trigger x>1ms"; do
	# shellcheck disable=SC2086
	out=$("$rec" $args 2>&1)
	rc=$?
	[ $rc -eq 2 ] && pass "record-refuses '$args'" || fail "record-refuses '$args'" "exit $rc: $out"
done
out=$("$rec" --debugfs "$work/flm/spulse" --no-load -o "$work/flm/rec.spulse" \
	--kallsyms "$work/rec/kallsyms" --off-cpu --flight 1 --post 0.2 \
	--trigger 'offcpu>55ms' --min-gap 0 -- sh -c 'sleep 0.3' 2>&1)
rc=$?
if [ $rc -eq 0 ] && grep -q 'flight dumps 4 (triggers 4, suppressed 0)' <<<"$out" &&
	[ -s "$work/flm/rec-001.spulse.kallsyms" ] &&
	v=$("$verify" "$work/flm/rec-003.spulse" "$work/flm/truth" --window --expect-stall 2>&1); then
	pass "record-flight ($v)"
else
	fail record-flight "exit $rc: $out ${v:-}"
fi

# ---- relay byte check (kmod/relay.c): bytes read per cpuN vs the stopped
# module's "cpuN ... bytes B"; a difference is reported, the spool stays valid
fake relaybytes --cpus 3 --samples 500 --seed 5
rb=$work/relaybytes
s0=$(stat -c %s "$rb/spulse/cpu0"); s1=$(stat -c %s "$rb/spulse/cpu1")
s2=$(stat -c %s "$rb/spulse/cpu2")
cp "$rb/spulse/stats" "$rb/stats.orig"
{
	echo "cpu0 taken 1 written 1 dropped 0 bytes $s0"
	echo "cpu1 taken 1 written 1 dropped 0 bytes $((s1 + 40))"
	echo "cpu2 taken 1 written 1 dropped 0 bytes $((s2 - 40))"
} >> "$rb/spulse/stats"
"$drain_san" --debugfs "$rb/spulse" -o "$rb/out.spulse" --once \
	--kallsyms "$rb/kallsyms" 2>"$rb/err"
rc=$?
if [ $rc -eq 0 ] &&
	grep -qx "spulse-drain: cpu1: relay delivered $s1 bytes, the module wrote $((s1 + 40)) (40 bytes lost)" "$rb/err" &&
	grep -qx "spulse-drain: cpu2: relay delivered $s2 bytes, the module wrote $((s2 - 40)) (40 bytes delivered twice)" "$rb/err" &&
	! grep -q "cpu0: relay" "$rb/err" &&
	grep -qx "spulse-drain: relay: 2 CPU stream(s) differ from what the module wrote (lost or repeated bytes)" "$rb/err" &&
	v=$("$verify" "$rb/out.spulse" "$rb/truth" 2>&1); then
	pass "relay-bytes-mismatch-reported ($v)"
else
	fail relay-bytes-mismatch-reported "exit $rc: $(cat "$rb/err") ${v:-}"
fi
# equal counts, or a module still running (it may write more): no report
{
	sed 's/^state stopped$/state running/' "$rb/stats.orig"
	echo "cpu1 taken 1 written 1 dropped 0 bytes $((s1 + 40))"
} > "$rb/spulse/stats"
"$drain_san" --debugfs "$rb/spulse" -o "$rb/out2.spulse" --once \
	--kallsyms "$rb/kallsyms" 2>"$rb/err2"
rc2=$?
{ cat "$rb/stats.orig"; echo "cpu0 taken 1 written 1 dropped 0 bytes $s0"; } > "$rb/spulse/stats"
"$drain_san" --debugfs "$rb/spulse" -o "$rb/out3.spulse" --once \
	--kallsyms "$rb/kallsyms" 2>"$rb/err3"
rc3=$?
if [ $rc2 -eq 0 ] && [ $rc3 -eq 0 ] && ! grep -q "relay delivered\|spulse-drain: relay:" "$rb/err2" "$rb/err3"; then
	pass relay-bytes-equal-or-running-not-reported
else
	fail relay-bytes-equal-or-running-not-reported "exit $rc2/$rc3: $(cat "$rb/err2" "$rb/err3")"
fi

# ---- the CLI agrees the drained spool is valid ----------------------------
if [ -x "$build/spulse" ]; then
	if out=$("$build/spulse" check --json "$work/basic/out-opt.spulse" 2>&1) &&
		grep -q "\"samples\":$(grep -c '^S ' "$work/basic/truth")," <<<"$out" &&
		grep -q '"recovered":false' <<<"$out"; then
		pass spulse-check-accepts-drained-spool
	else
		fail spulse-check-accepts-drained-spool "$out"
	fi
fi

# ---- unwind-table loading (tests/drain/unwind.sh) ------------------------
. "$top/tests/drain/unwind.sh"

# ---- epoch headers that contradict the stream (tests/drain/epoch_header.sh)
. "$top/tests/drain/epoch_header.sh"

echo "drain: $passed passed, $failed failed"
mkdir -p "$build/check"
echo "$passed $failed" >"$build/check/drain.result"
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# Suite "sym": symbolization tests (docs/CLI.md "Symbolization").
#   run.sh TEST_SYM... -- SPULSE...
# Runs every test of each test_sym binary (the -O2 and the ASan+UBSan
# build; `test_sym --list`) and the CLI checks below with each spulse
# binary, one line per test, and writes $BUILD/check/sym.result
# ("PASSED FAILED"). Exit status 77 of a test = skipped (counted as passed,
# printed SKIP with its reason). The debuginfod test runs against a local
# `debuginfod -F` over $SYMT/dbgd started here on 127.0.0.1 and stopped
# after it. SYM_TESTS="regex" runs only the matching tests.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-$top/build}
: "${SYMT:?SYMT (directory of the built test ELFs) must be set}"
export SYMT SYMSRC=${SYMSRC:-$here}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
SPOOLGEN=${SPOOLGEN:-$BUILD/tests/cli/spoolgen}
unset DEBUGINFOD_URLS

testers=()
spulses=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do testers+=("$1"); shift; done
[ $# -gt 0 ] && shift
spulses=("$@")

pass=0
fail=0
dbgd_pid=

report() {	# NAME FLAVOUR RC LOG
	case $3 in
	0) echo "PASS $2 $1"; pass=$((pass + 1)) ;;
	77) echo "SKIP $2 $1: $(tail -n 1 "$4")"; pass=$((pass + 1)) ;;
	*) echo "FAIL $2 $1"; sed 's/^/    /' "$4" | tail -n 25
	   fail=$((fail + 1)) ;;
	esac
}

wanted() { [ -z "${SYM_TESTS:-}" ] || echo "$1" | grep -Eq -- "$SYM_TESTS"; }

flavour_of() { case $1 in *san*) echo san ;; *) echo opt ;; esac; }

# A local debuginfod serving $SYMT/dbgd (the rebuilt variant v1).
dbgd_start() {
	local port bid i
	command -v debuginfod >/dev/null && command -v debuginfod-find \
		>/dev/null || return 1
	DBGD_DIR=$(mktemp -d "${TMPDIR:-/tmp}/spulse-dbgd.XXXXXX")
	bid=$(readelf -n "$SYMT/v1/symprog" | awk '/Build ID/ { print $3 }')
	for i in 1 2 3 4 5; do
		port=$((20000 + (RANDOM % 20000)))
		debuginfod -F -p "$port" -d "$DBGD_DIR/db.sqlite" \
			"$SYMT/dbgd" >"$DBGD_DIR/log" 2>&1 &
		dbgd_pid=$!
		export DEBUGINFOD_URLS=http://127.0.0.1:$port
		for j in $(seq 1 100); do
			kill -0 "$dbgd_pid" 2>/dev/null || break
			# a fresh cache per probe: the client caches misses
			export DEBUGINFOD_CACHE_PATH=$DBGD_DIR/probe-$j
			if debuginfod-find executable "$bid" >/dev/null 2>&1; then
				export DEBUGINFOD_CACHE_PATH=$DBGD_DIR/cache
				return 0
			fi
			sleep 0.2
		done
		dbgd_stop
	done
	return 1
}

dbgd_stop() {
	if [ -n "$dbgd_pid" ]; then
		kill "$dbgd_pid" 2>/dev/null
		wait "$dbgd_pid" 2>/dev/null
	fi
	dbgd_pid=
	unset DEBUGINFOD_URLS DEBUGINFOD_CACHE_PATH
	[ -n "${DBGD_DIR:-}" ] && rm -rf "$DBGD_DIR"
	DBGD_DIR=
}
trap dbgd_stop EXIT

for t in "${testers[@]}"; do
	fl=$(flavour_of "$t")
	for name in $("$t" --list); do
		wanted "$name" || continue
		WORK=$(mktemp -d "${TMPDIR:-/tmp}/spulse-sym.XXXXXX")
		export WORK
		if [ "$name" = debuginfod_by_build_id ]; then
			if dbgd_start; then
				"$t" "$name" >"$WORK/log" 2>&1
				rc=$?
			else
				echo "no debuginfod could be started" >"$WORK/log"
				rc=1
			fi
			dbgd_stop
		else
			"$t" "$name" >"$WORK/log" 2>&1
			rc=$?
		fi
		report "$name" "$fl" "$rc" "$WORK/log"
		rm -rf "$WORK"
	done
done

# ---- CLI checks: the same symbolizer behind spulse report --------------

# spool text for spoolgen: one sample whose leaf is module 0 at REL, over
# module 1 at REL2 (PATH0 and PATH1 in dump's escaped form)
spool_text() {	# PATH0 REL PATH1 REL2
	cat <<EOT
# header start_us=1700000000000000 interval_us=1000
module id=0 pid=100 start=0x7f0000000000 end=0x7f0010000000 file_offset=0x0 path=$1 build_id=
module id=1 pid=100 start=0x7f1000000000 end=0x7f1010000000 file_offset=0x0 path=$3 build_id=
frame id=0 kind=module module=0 rel=$2
frame id=1 kind=module module=1 rel=$4
stack id=0 parent=root frame=1
stack id=1 parent=0 frame=0
thread id=0 pid=100 tid=100 comm=t
sample dt_ns=1000 thread=0 stack=1
EOT
}

rel_of() {	# ELF SYMBOL -> file offset (nm + the PT_LOAD holding it)
	local v typ off va pa fs rest
	v=$({ nm "$1"; nm -D "$1"; } 2>/dev/null |
		awk -v s="$2" '{ sub(/@.*/, "", $3) } $3 == s { print $1; exit }')
	[ -n "$v" ] || return 1
	v=$((16#$v))
	while read -r typ off va pa fs rest; do
		[ "$typ" = LOAD ] || continue
		if [ "$v" -ge $((va)) ] && [ "$v" -lt $((va + fs)) ]; then
			printf '0x%x\n' $((v - va + off))
			return 0
		fi
	done < <(readelf -lW "$1")
	return 1
}

# A module path naming a FIFO: report finishes, frame stays hex.
cli_fifo_module_path_does_not_hang() {
	mkfifo "$WORK/fifo" || return 1
	spool_text "$WORK/fifo" 0x1170 "$SYMT/symprog" \
		"$(rel_of "$SYMT/symprog" sym_caller)" | "$SPOOLGEN" \
		>"$WORK/f.spulse" || return 1
	timeout 30 "$SP" report "$WORK/f.spulse" >"$WORK/out" || return 1
	cat "$WORK/out"
	grep -q "0x1170 \[$WORK/fifo\]" "$WORK/out" &&
		grep -q "sym_caller" "$WORK/out"
}

# A path with a NUL byte is not cut at it (the file before the NUL
# exists and would name the frame): it does not open and prints escaped.
cli_nul_byte_path_not_cut() {
	local rel
	rel=$(rel_of "$SYMT/symprog" sym_line_probe) || return 1
	spool_text "$SYMT/symprog\\x00junk" "$rel" "$SYMT/symprog" "$rel" |
		"$SPOOLGEN" >"$WORK/n.spulse" || return 1
	timeout 30 "$SP" report "$WORK/n.spulse" >"$WORK/out" || return 1
	cat "$WORK/out"
	# the leaf (the NUL path) is the 100% self row: hex, the path whole,
	# its NUL as \x00 by the one printing rule of docs/CLI.md (the
	# symbolizer hands the path out with its length; before, it was the
	# text \x00 and printed as \x5cx00)
	grep -E "^ *100\.00% +1 .*$rel \[$SYMT/symprog\\\\x00junk\]" \
		"$WORK/out" >/dev/null &&
		grep -Eq "^ *0\.00% +0 .*sym_line_probe" "$WORK/out" || return 1
	# the label keeps the path's bytes, so two paths differing only
	# after the NUL are two rows, and a path holding the text \x00 is a
	# third: "/a\0b", "/a\0c" and "/a\\x00b" (the old symbolizer's text
	# made the first and third one label)
	cat <<EOT | "$SPOOLGEN" >"$WORK/n3.spulse" || return 1
# header start_us=1700000000000000 interval_us=1000
module id=0 pid=100 start=0x7f0000000000 end=0x7f0010000000 file_offset=0x0 path=/a\\x00b build_id=
module id=1 pid=100 start=0x7f1000000000 end=0x7f1010000000 file_offset=0x0 path=/a\\x00c build_id=
module id=2 pid=100 start=0x7f2000000000 end=0x7f2010000000 file_offset=0x0 path=/a\\x5cx00b build_id=
frame id=0 kind=module module=0 rel=0x10
frame id=1 kind=module module=1 rel=0x10
frame id=2 kind=module module=2 rel=0x10
stack id=0 parent=root frame=0
stack id=1 parent=root frame=1
stack id=2 parent=root frame=2
thread id=0 pid=100 tid=100 comm=t
sample dt_ns=1000 thread=0 stack=0
sample dt_ns=1000 thread=0 stack=0
sample dt_ns=1000 thread=0 stack=1
sample dt_ns=1000 thread=0 stack=2
EOT
	timeout 30 "$SP" report "$WORK/n3.spulse" >"$WORK/out3" || return 1
	cat "$WORK/out3"
	grep -Eq '^ *50\.00% +2 .*0x10 \[/a\\x00b\]$' "$WORK/out3" &&
		grep -Eq '^ *25\.00% +1 .*0x10 \[/a\\x00c\]$' "$WORK/out3" &&
		grep -Eq '^ *25\.00% +1 .*0x10 \[/a\\x5cx00b\]$' "$WORK/out3"
}

# report names C++ functions demangled and the shared library's symbols.
cli_report_names_cxx_and_library() {
	local r1 r2
	r1=$(rel_of "$SYMT/symcxx" _ZN9spulse_ns4overEd) || return 1
	r2=$(rel_of "$SYMT/libsymlib.so" symlib_helper) || return 1
	spool_text "$SYMT/symcxx" "$r1" "$SYMT/libsymlib.so" "$r2" |
		"$SPOOLGEN" >"$WORK/c.spulse" || return 1
	timeout 30 "$SP" report "$WORK/c.spulse" >"$WORK/out" || return 1
	cat "$WORK/out"
	grep -q "spulse_ns::over(double)" "$WORK/out" &&
		grep -q "symlib_helper" "$WORK/out"
}

# [vdso] frames are named from SPOOL.vdso (saved by the drainer's
# drain_capture_vdso(), here by test_sym --capture-vdso) and print [vdso].
cli_vdso_named_from_sidecar() {
	local rel
	"${testers[0]}" --capture-vdso "$WORK/v.spulse" || return 1
	rel=$(rel_of "$WORK/v.spulse.vdso" __vdso_clock_gettime) || return 1
	spool_text "[vdso]" "$rel" "[vdso]" 0x0 | "$SPOOLGEN" \
		>"$WORK/v.spulse" || return 1
	timeout 30 "$SP" report "$WORK/v.spulse" >"$WORK/out" || return 1
	cat "$WORK/out"
	grep -Eq "^ *100\.00% +1 .* __vdso_clock_gettime \[vdso\]$" \
		"$WORK/out" && grep -q "0x0 \[vdso\]" "$WORK/out" &&
		! grep -q "\[\[vdso\]\]" "$WORK/out"
}

# JIT frames (absolute user addresses) through SPOOL.perf-PID.map.
cli_jit_named_from_saved_perf_map() {
	cat >"$WORK/j.txt" <<EOT
# header start_us=1700000000000000 interval_us=1000
frame id=0 kind=user addr=0x7f0000001010
stack id=0 parent=root frame=0
thread id=0 pid=100 tid=100 comm=t
sample dt_ns=1000 thread=0 stack=0
EOT
	"$SPOOLGEN" <"$WORK/j.txt" >"$WORK/j.spulse" || return 1
	printf '7f0000001000 40 LuaJIT::trace_7\n' >"$WORK/j.spulse.perf-100.map"
	timeout 30 "$SP" report "$WORK/j.spulse" >"$WORK/out" 2>"$WORK/err" ||
		return 1
	cat "$WORK/out" "$WORK/err"
	grep -q "LuaJIT::trace_7" "$WORK/out" &&
		grep -q "JIT symbols of pid 100 from $WORK/j.spulse.perf-100.map" \
			"$WORK/err"
}

# Perf maps are found by listing their directories, not by a stat() per
# defined pid (issue 25: a spool of 1M threads made 2M failed stat()s):
# 20,000 pids, one saved map; report names the JIT frame and makes no
# stat() of a perf-PID.map path that does not exist (the old symbolizer:
# two per pid, 40,000). Counted with strace (skipped without it).
cli_perf_maps_not_stat_per_pid() {
	command -v strace >/dev/null || { echo "strace not installed"; return 77; }
	python3 - >"$WORK/p.txt" <<'PY'
print('# header start_us=1700000000000000 interval_us=1000')
print('frame id=0 kind=user addr=0x7f0000001010')
print('stack id=0 parent=root frame=0')
for i in range(20000):
    print('thread id=%d pid=%d tid=%d comm=t' % (i, 1000 + i, 1000 + i))
print('sample dt_ns=1000 thread=7 stack=0')
PY
	"$SPOOLGEN" <"$WORK/p.txt" >"$WORK/p.spulse" || return 1
	printf '7f0000001000 40 LuaJIT::trace_9\n' >"$WORK/p.spulse.perf-1007.map"
	# LeakSanitizer cannot run under ptrace: leaks are checked by the
	# other tests of the sanitized binary
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		timeout 120 strace -f -o "$WORK/trace" \
		-e trace=stat,lstat,newfstatat,statx "$SP" report "$WORK/p.spulse" >"$WORK/out" 2>"$WORK/err" || return 1
	cat "$WORK/out" "$WORK/err"
	local n
	n=$(grep -c 'perf-[0-9]*\.map.*ENOENT' "$WORK/trace")
	echo "failed stat()s of perf maps: $n"
	grep -q "LuaJIT::trace_9" "$WORK/out" && [ "$n" -eq 0 ]
}

# Kernel frames past _etext or far past a module's last symbol stay hex.
cli_kernel_past_text_end_is_hex() {
	cat >"$WORK/k.txt" <<EOT
# header start_us=1700000000000000 interval_us=1000
frame id=0 kind=kernel addr=0xffffffff82000010
frame id=1 kind=kernel addr=0xffffffffc0001110
frame id=2 kind=kernel addr=0xffffffffffaaa42b
stack id=0 parent=root frame=0
stack id=1 parent=root frame=1
stack id=2 parent=root frame=2
thread id=0 pid=100 tid=100 comm=t
sample dt_ns=1000 thread=0 stack=0
sample dt_ns=1000 thread=0 stack=1
sample dt_ns=1000 thread=0 stack=2
EOT
	"$SPOOLGEN" <"$WORK/k.txt" >"$WORK/k.spulse" || return 1
	printf '%s\n' "ffffffff81000000 T _stext" "ffffffff81000100 T kfn_a" \
		"ffffffff82000000 T _etext" \
		"ffffffffc0001100 t modfn_b	[mymod]" >"$WORK/k.spulse.kallsyms"
	timeout 30 "$SP" report "$WORK/k.spulse" >"$WORK/out" || return 1
	cat "$WORK/out"
	grep -q "0xffffffff82000010" "$WORK/out" &&
		grep -q "modfn_b \[mymod\]" "$WORK/out" &&
		grep -q "0xffffffffffaaa42b" "$WORK/out" &&
		! grep -q "_etext\|kfn_a" "$WORK/out"
}

# Names longer than any fixed buffer (2500 bytes; C++ templates get there)
# stay whole: two functions that differ only in their last bytes are two
# report rows, two folded stacks and two flame boxes.
cli_long_names_stay_whole() {
	local base r1 r2 n
	base=$(printf 'f%.0s' $(seq 1 2500))
	printf 'int %s_one(int x) { return x + 1; }\nint %s_two(int x) { return x * 3; }\n' \
		"$base" "$base" >"$WORK/long.c"
	cc -O1 -fPIC -shared -o "$WORK/long.so" "$WORK/long.c" || return 1
	r1=$(rel_of "$WORK/long.so" "${base}_one") || return 1
	r2=$(rel_of "$WORK/long.so" "${base}_two") || return 1
	"$SPOOLGEN" >"$WORK/l.spulse" <<EOT || return 1
# header start_us=1700000000000000 interval_us=1000
module id=0 pid=100 start=0x7f0000000000 end=0x7f0010000000 file_offset=0x0 path=$WORK/long.so build_id=
frame id=0 kind=module module=0 rel=$r1
frame id=1 kind=module module=0 rel=$r2
stack id=0 parent=root frame=0
stack id=1 parent=root frame=1
thread id=0 pid=100 tid=100 comm=t
sample dt_ns=1000 thread=0 stack=0
sample dt_ns=1000 thread=0 stack=1
sample dt_ns=1000 thread=0 stack=1
EOT
	timeout 30 "$SP" report "$WORK/l.spulse" >"$WORK/out" || return 1
	# whole names: 1 + 2500 + 4 bytes, the row ends with them
	grep -Eq "^ *33\.33% +1 .* ${base}_one \[" "$WORK/out" ||
		{ echo "no _one row"; head -c 600 "$WORK/out"; return 1; }
	grep -Eq "^ *66\.67% +2 .* ${base}_two \[" "$WORK/out" ||
		{ echo "no _two row"; head -c 600 "$WORK/out"; return 1; }
	timeout 30 "$SP" flame "$WORK/l.spulse" --folded >"$WORK/folded" ||
		return 1
	n=$(grep -Ec "(^|;)${base}_(one 1|two 2)$" "$WORK/folded")
	[ "$n" = 2 ] || { echo "folded: $n of 2 stacks"; return 1; }
	timeout 30 "$SP" flame "$WORK/l.spulse" -o "$WORK/l.svg" || return 1
	grep -q "${base}_one" "$WORK/l.svg" && grep -q "${base}_two" "$WORK/l.svg" ||
		{ echo "svg lacks a whole name"; return 1; }
	n=$(grep -Eo "<title>${base}_(one|two)[^<]*" "$WORK/l.svg" | sort -u | wc -l)
	[ "$n" = 2 ] || { echo "svg: $n distinct boxes, wanted 2"; return 1; }
}

for SP in "${spulses[@]}"; do
	export SP
	fl=$(flavour_of "$SP")
	for name in $(declare -F | awk '$3 ~ /^cli_/ { print $3 }'); do
		wanted "$name" || continue
		WORK=$(mktemp -d "${TMPDIR:-/tmp}/spulse-sym.XXXXXX")
		export WORK
		(cd "$WORK" && "$name") >"$WORK/log" 2>&1
		report "$name" "$fl" $? "$WORK/log"
		rm -rf "$WORK"
	done
done

mkdir -p "$BUILD/check"
echo "$pass $fail" >"$BUILD/check/sym.result"
echo "sym: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

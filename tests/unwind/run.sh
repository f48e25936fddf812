#!/usr/bin/env bash
# Suite "unwind": unit tests of libspulse-unwind (cmocka, ASan+UBSan), the
# tables of the test ELFs and of Debian's own binaries compared with
# readelf's CFI decoder at every row boundary (check_readelf.py), and the
# `spulse unwind` command line. Writes $BUILD/check/unwind.result.
#
# usage: run.sh UNWIND_TEST_DIR SPULSE
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-$top/build}
dir=$1
spulse_src=$2
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LC_ALL=C

tmp=$(mktemp -d "${TMPDIR:-/tmp}/spulse-unwind.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# A private copy: a concurrent make elsewhere may relink the original.
cp "$spulse_src" "$tmp/spulse" || exit 1
spulse=$tmp/spulse

pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
notok() { fail=$((fail + 1)); echo "not ok - $1"; }
check() { # NAME CMD...: passes when CMD exits 0
	local name=$1
	shift
	if "$@"; then ok "$name"; else notok "$name"; fi
}

# libut-dframe.so split the way distributions ship it: a stripped file
# (no .debug_frame) and DEBUG/.build-id/xx/rest.debug.
mkdir -p "$tmp/dframe"
id=$(readelf -n "$dir/libut-dframe.so" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
mkdir -p "$tmp/dframe/debug/.build-id/${id:0:2}"
objcopy --only-keep-debug "$dir/libut-dframe.so" \
	"$tmp/dframe/debug/.build-id/${id:0:2}/${id:2}.debug"
objcopy --strip-debug "$dir/libut-dframe.so" "$tmp/dframe/libut-dframe.so"

# ---- unit tests ---------------------------------------------------------
out=$(UT_DIR=$dir UT_TMP=$tmp CMOCKA_MESSAGE_OUTPUT=TAP "$dir/test_unwind" 2>&1)
rc=$?
printf '%s\n' "$out" | sed 's|^|test_unwind: |'
plan=$(printf '%s\n' "$out" | sed -n 's/^1\.\.\([0-9]*\)$/\1/p' | head -1)
u_ok=$(printf '%s\n' "$out" | grep -c '^ok ')
[ -n "$plan" ] || plan=$((u_ok + 1))
u_bad=$((plan - u_ok))
if [ "$rc" -ne 0 ] && [ "$u_bad" -eq 0 ]; then u_bad=1; fi
pass=$((pass + u_ok))
fail=$((fail + u_bad))

# ---- rows agree with readelf -wF at every boundary -----------------------
cmp_readelf() { # FILE [ARGS]
	timeout 300 python3 "$here/check_readelf.py" "$spulse" "$@"
}
for f in libut.so ut_prog libut-ibt.so libut-nofde.so libut-nofde-lazy.so libut-noid.so \
	libut-dframe.so; do
	check "readelf agrees: $f" cmp_readelf "$dir/$f"
done
check "readelf agrees: stripped libut-dframe.so + debug file by build-id" \
	cmp_readelf "$tmp/dframe/libut-dframe.so" --readelf-file "$dir/libut-dframe.so" \
	--debug-dir "$tmp/dframe/debug"
# The vDSO image test_unwind wrote (built from memory there).
if [ -s "$tmp/vdso.so" ]; then
	check "readelf agrees: the vDSO (copy of this kernel's image)" cmp_readelf "$tmp/vdso.so"
else
	notok "readelf agrees: the vDSO (test_unwind wrote no copy)"
fi
for f in /usr/bin/python3.11 /lib/x86_64-linux-gnu/libc.so.6 \
	/lib64/ld-linux-x86-64.so.2 /usr/bin/xz /bin/gzip; do
	if [ -r "$f" ]; then
		check "readelf agrees: $f" cmp_readelf "$f"
	else
		notok "readelf agrees: $f (missing)"
	fi
done

# The tables unwind real stacks: ut_walk steps its own stacks the way the
# kernel does, from a SIGPROF handler through __restore_rt (SIGNAL) to _start
# / clone3 (END), and every walk must equal backtrace()'s frames.
walk_like_backtrace() {
	local out
	out=$(LD_BIND_NOW=1 timeout 120 "$dir/ut_walk" 1) || { echo "$out"; return 1; }
	echo "$out"
}
check "stack walks with the tables equal backtrace() (ut_walk, 1 s of CPU)" walk_like_backtrace

# The same inside Debian's python3.11 (LD_PRELOAD): its interpreter, libc,
# libm and extension modules unwound from a SIGPROF handler. work.py
# signals the walker after its imports (UT_WALK_WAIT) so that the tables
# cover its extension modules; xz and gzip are walked from the start.
UT_WALK_ENV=
preload_walks() { # NAME CMD...: run CMD with the walker preloaded
	local name=$1 res=$tmp/walk-$1 w c a d
	shift
	[ -x "$1" ] || { echo "no $1"; return 1; }
	# env(1) sets LD_PRELOAD for CMD only, not for timeout(1).
	timeout 120 env LD_BIND_NOW=1 UT_WALK_RESULT="$res" $UT_WALK_ENV \
		LD_PRELOAD="$dir/ut_walk_preload.so" "$@" >/dev/null || return 1
	read -r w c a d <"$res" || return 1
	echo "$name: $w walks, $c reached END, $a equal to backtrace(), $d differ"
	[ "$w" -gt 0 ] && [ "$d" -eq 0 ] && [ "$a" -eq "$c" ] && [ $((c * 100)) -ge $((w * 95)) ]
}
head -c 3000000 /dev/urandom | od -An -tx1 >"$tmp/data.txt"
head -c 1000000 "$tmp/data.txt" >"$tmp/data-1m.txt"
UT_WALK_ENV=UT_WALK_WAIT=1 check "python3.11 stacks walked with the tables: >= 95% reach END, all equal backtrace()" \
	preload_walks python3.11 /usr/bin/python3.11 "$here/src/work.py" 2
check "xz stacks walked with the tables: >= 95% reach END, all equal backtrace()" \
	preload_walks xz /usr/bin/xz -T1 -6 -c "$tmp/data-1m.txt"
check "gzip stacks walked with the tables: >= 95% reach END, all equal backtrace()" \
	preload_walks gzip /bin/gzip -9 -c "$tmp/data.txt"

# An FDE with 40000 rows: rows up to the per-FDE work bound, then UNKNOWN
# for the rest of the function; done in bounded time (a timeout fails it).
big_fde_bounded() {
	local out a
	out=$(timeout 60 "$spulse" unwind show "$dir/libbig.so") || return 1
	a=$(nm "$dir/libbig.so" | awk '$3 == "big" {print $1}')
	grep -q "^0*$a [0-9a-f]* cfa_sp  *8 0\$" <<<"$out" || return 1
	grep -q "^0*$(printf '%x' $((0x$a + 1))) [0-9a-f]* cfa_sp  *16 0\$" <<<"$out" || return 1
	[ "$(grep -c ' unknown ' <<<"$out")" -eq 1 ] || return 1
	# The function ends at a + 40001: the UNKNOWN row reaches it.
	grep -q " 0*$(printf '%x' $((0x$a + 40001))) unknown " <<<"$out"
}
check "an FDE with 40000 rows is cut to UNKNOWN at the work bound, quickly" big_fde_bounded

# The debug file fetched from a debuginfod server (a local one serving
# only that file) when no debug directory has it.
via_debuginfod() {
	command -v debuginfod >/dev/null || { echo "no debuginfod"; return 1; }
	local srv=$tmp/dfd/srv port pid i rc a out
	mkdir -p "$srv"
	objcopy --only-keep-debug "$dir/libut-dframe.so" "$srv/libut-dframe.debug" || return 1
	port=$((20000 + RANDOM % 30000))
	debuginfod -p "$port" -F -d "$tmp/dfd/db.sqlite" --disable-source-scan -c 1 \
		"$srv" >"$tmp/dfd/log" 2>&1 &
	pid=$!
	export DEBUGINFOD_URLS=http://127.0.0.1:$port
	# A fresh client cache per poll: a 404 before the scan is cached.
	for i in $(seq 1 60); do
		DEBUGINFOD_CACHE_PATH=$tmp/dfd/poll$i debuginfod-find debuginfo "$id" \
			>/dev/null 2>&1 && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.5
	done
	a=$(nm "$dir/libut-dframe.so" | awk '$3 == "ut_recurse" {print $1}')
	export DEBUGINFOD_CACHE_PATH=$tmp/dfd/cache
	out=$(timeout 60 "$spulse" unwind show "$tmp/dframe/libut-dframe.so" --debuginfod \
		--debug-dir "$tmp/nodebug" --at "0x$a" | tail -1)
	rc=$?
	# Without --debuginfod the same lookup finds no CFI there.
	local plain
	plain=$("$spulse" unwind show "$tmp/dframe/libut-dframe.so" --debug-dir "$tmp/nodebug" \
		--at "0x$a" | tail -1)
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	unset DEBUGINFOD_URLS DEBUGINFOD_CACHE_PATH
	[ "$rc" -eq 0 ] && grep -q "^0*$a [0-9a-f]* cfa_sp  *8 0\$" <<<"$out" &&
		grep -q " none " <<<"$plain" || { echo "got '$out' / '$plain' after $i polls"; tail -5 "$tmp/dfd/log"; return 1; }
}
check "debug file fetched from debuginfod by build-id (--debuginfod)" via_debuginfod

# ---- command line -------------------------------------------------------
help_sections() {
	local h
	h=$("$spulse" unwind --help) || return 1
	for s in NAME SYNOPSIS DESCRIPTION OPTIONS EXAMPLES "EXIT STATUS"; do
		grep -q "^$s\$" <<<"$h" || { echo "no $s section"; return 1; }
	done
}
check "unwind --help has the man-page sections" help_sections

exit_is() { # CODE CMD...
	local want=$1 got
	shift
	"$@" >/dev/null 2>&1
	got=$?
	[ "$got" -eq "$want" ] || { echo "exit $got, want $want: $*"; return 1; }
}
check "no subcommand is a usage error (2)" exit_is 2 "$spulse" unwind
check "unknown subcommand is a usage error (2)" exit_is 2 "$spulse" unwind frob x
check "show with two files is a usage error (2)" exit_is 2 "$spulse" unwind show "$dir/libut.so" "$dir/libut.so"
check "bad --at value is a usage error (2)" exit_is 2 "$spulse" unwind show "$dir/libut.so" --at zz
check "show of a directory fails (1)" exit_is 1 "$spulse" unwind show "$tmp"

show_at_row() {
	local a out
	a=$(nm "$dir/libut.so" | awk '$3 == "ut_fp_align" {print $1}')
	out=$("$spulse" unwind show "$dir/libut.so" --at "0x$a") || return 1
	# Header, then exactly one row starting at the function.
	grep -q "^kinds " <<<"$out" || return 1
	[ "$(grep -c '^[0-9a-f]\{16\} [0-9a-f]\{16\} ' <<<"$out")" -eq 1 ] || return 1
	grep -q "^0*$a [0-9a-f]* cfa_sp  *8 0\$" <<<"$out"
}
check "show --at prints the one row covering the address" show_at_row
check "show --at outside the table exits 1" exit_is 1 "$spulse" unwind show "$dir/libut.so" --at 0x10

show_fifo() {
	mkfifo "$tmp/pipe" || return 1
	timeout 10 "$spulse" unwind show "$tmp/pipe" 2>"$tmp/fifo.err"
	local rc=$?
	[ "$rc" -eq 1 ] && grep -q "not a regular file" "$tmp/fifo.err"
}
check "show of a FIFO fails at once with 'not a regular file'" show_fifo

build_twice() {
	local c=$tmp/cli-cache out
	out=$("$spulse" unwind build "$dir/libut.so" "$dir/ut_prog" -o "$c") || return 1
	[ "$(grep -c 'built and cached' <<<"$out")" -eq 2 ] || { echo "$out"; return 1; }
	out=$("$spulse" unwind build "$dir/libut.so" "$dir/ut_prog" -o "$c") || return 1
	[ "$(grep -c ', cached in' <<<"$out")" -eq 2 ] || { echo "$out"; return 1; }
	# A damaged cache file is rebuilt.
	local f
	f=$(find "$c" -name '*.sut' | head -1)
	printf 'garbage' | dd of="$f" bs=1 seek=40 conv=notrunc 2>/dev/null
	out=$("$spulse" unwind build "$dir/libut.so" "$dir/ut_prog" -o "$c") || return 1
	[ "$(grep -c 'built and cached' <<<"$out")" -eq 1 ]
}
check "build caches by build-id, reuses, rebuilds a damaged file" build_twice
build_unwritable() {
	local out
	out=$("$spulse" unwind build "$dir/libut.so" -o "$tmp/no/such/dir" 2>"$tmp/unw.err")
	[ $? -eq 1 ] && grep -q "NOT cached" <<<"$out" && grep -q "cannot write" "$tmp/unw.err"
}
check "build into an unwritable cache says NOT cached and exits 1" build_unwritable
default_cache() {
	local out
	out=$(env -u XDG_CACHE_HOME HOME="$tmp/home" "$spulse" unwind build "$dir/libut.so") || return 1
	grep -q "built and cached" <<<"$out" &&
		[ "$(find "$tmp/home/.cache/spulse/unwind" -name '*.sut' | wc -l)" -eq 1 ]
}
check "build without -o caches under ~/.cache/spulse/unwind" default_cache
check "build with one bad file still builds the rest, exits 1" \
	bash -c '"$1" unwind build "$2" /nonexistent -o "$3" 2>/dev/null | grep -q "libut.so: build-id"; [ "${PIPESTATUS[0]}" -eq 1 ]' \
	_ "$spulse" "$dir/libut.so" "$tmp/c2"

# sut_deps(): the files ld.so itself loads (ldd = ld.so --list), for the
# test program (RUNPATH $ORIGIN) and Debian binaries; scripts refused
deps_match() { # FILE
	local want got
	want=$( (readlink -f "$1"; ldd "$1" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }
		$1 ~ /^\// { print $1 }' | xargs -r readlink -f) | sort -u)
	got=$("$dir/ut_deps" "$1" | sort -u) || return 1
	[ "$want" = "$got" ] || { echo "  want: $want"; echo "  got:  $got"; return 1; }
}
for f in "$dir/ut_prog" /usr/bin/python3 /usr/bin/xz /usr/bin/gzip /usr/bin/curl /usr/bin/perl; do
	[ -e "$f" ] && check "sut_deps($f) = the files ld.so loads (ldd)" deps_match "$f"
done
deps_script() {
	printf '#!/bin/sh\n' > "$tmp/script.sh"
	"$dir/ut_deps" "$tmp/script.sh" 2>&1 | grep -q "Exec format error" &&
		! "$dir/ut_deps" /nonexistent 2>/dev/null
}
check "sut_deps refuses a script (ENOEXEC) and a missing file" deps_script

mkdir -p "$(dirname "$BUILD/check/unwind.result")"
echo "$pass $fail" > "$BUILD/check/unwind.result"
echo "unwind: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

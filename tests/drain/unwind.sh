# Drain suite, unwind-table loading (sourced by tests/drain/run.sh, which
# defines pass/fail/unit, $bin, $work, $build). A fake debugfs directory holds a
# meta stream written by unwind_msgs (module records naming real files of
# this machine: python3.11, libc, a missing file, [vdso]) and a regular
# file "unwind" standing in for debugfs spulse/unwind: the drainer writes
# its messages there (one write per message) and unwind_msgs dump parses
# them back, validating every header and length. Expected tables come from
# unwind_msgs sum (libspulse-unwind run here) and expected biases from the
# files' program headers (unwind_msgs bias, libelf, independent of the
# library).
# unit tests of the loader's API (tests/drain/test_unwind_load.c)
if [ -x "$bin/test_unwind_load" ]; then
	unit unwind-unit test_unwind_load	# run.sh's runner
else
	fail unwind-unit/build "no $bin/test_unwind_load"
fi

um=$bin/unwind_msgs
PY=$(readlink -f /usr/bin/python3 2>/dev/null)
LC=$(readlink -f /lib/x86_64-linux-gnu/libc.so.6 2>/dev/null)

# the r-x PT_LOAD of FILE: "offset vaddr" (hex, no 0x)
rx_seg() {
	readelf -lW "$1" | awk '$1 == "LOAD" && $7 == "R" && $8 == "E" {
		sub("0x", "", $2); sub("0x", "", $3); print $2, $3; exit }'
}

if [ ! -x "$um" ] || [ -z "$PY" ] || [ -z "$LC" ] || [ ! -r "$PY" ] || [ ! -r "$LC" ]; then
	fail unwind-setup "need $um, python3 and libc.so.6"
else
	read -r py_off py_va < <(rx_seg "$PY")
	read -r lc_off lc_va < <(rx_seg "$LC")
	py_start=$(printf '%x' $((0x$py_va & ~0xfff)))
	py_pg=$(printf '%x' $((0x$py_off & ~0xfff)))
	py_end=$(printf '%x' $((0x$py_start + 0x100000)))
	lc_pg=$(printf '%x' $((0x$lc_off & ~0xfff)))
	lc1=$(printf '%x' $((0x7f0000000000 + 0x$lc_pg)))
	lc1e=$(printf '%x' $((0x$lc1 + 0x100000)))
	lc2=$(printf '%x' $((0x7e0000000000 + 0x$lc_pg)))
	lc2e=$(printf '%x' $((0x$lc2 + 0x100000)))
	py_sum=$("$um" sum "$PY")
	lc_sum=$("$um" sum "$LC")
	py_bias=$("$um" bias "$PY" "$py_start" "$py_pg")
	# the vDSO: this kernel's image (the drainer's own), start 7fff0000
	"$um" vdso "$work/vdso.img"
	vd_sum=$("$um" sum "$work/vdso.img")
	vd_bias=$("$um" bias "$work/vdso.img" 7fff0000 0)
	lc1_bias=$("$um" bias "$LC" "$lc1" "$lc_pg")
	lc2_bias=$("$um" bias "$LC" "$lc2" "$lc_pg")

	# pid 100: python3 + libc + [vdso]; pid 200: libc (same build-id), a
	# python3 record whose build-id is not the file's, a missing file
	uw=$work/uw
	rm -rf "$uw"
	mkdir -p "$uw/d"
	"$um" meta "$uw/d" \
		"M:0:100:$py_start:$py_end:$py_pg:$PY:file" \
		"M:1:100:$lc1:$lc1e:$lc_pg:$LC:file" \
		"M:2:100:7fff0000:7fff2000:0:[vdso]:-" \
		"M:3:200:$lc2:$lc2e:$lc_pg:$LC:file" \
		"M:4:200:$py_start:$py_end:$py_pg:$PY:deadbeef" \
		"M:5:200:500000:600000:0:$uw/no-such-lib.so:-"
	"$drain_san" --debugfs "$uw/d" -o "$uw/out.spulse" --once --no-kallsyms \
		--unwind-cache "$uw/cache" 2>"$uw/err"
	rc=$?
	msgs=$("$um" dump "$uw/d/unwind" 2>&1)
	mrc=$?
	adds=$(grep -c '^ADD' <<<"$msgs")
	vd_id=$(awk -v s="$vd_sum" '$1 == "ADD" && $7 == s { sub("id=", "", $2); print $2 }' <<<"$msgs")
	py_id=$(awk -v s="$py_sum" '$1 == "ADD" && $7 == s { sub("id=", "", $2); print $2 }' <<<"$msgs")
	lc_id=$(awk -v s="$lc_sum" '$1 == "ADD" && $7 == s { sub("id=", "", $2); print $2 }' <<<"$msgs")
	if [ $rc -eq 0 ] && [ $mrc -eq 0 ] && [ "$adds" -eq 3 ] && [ -n "$py_id" ] &&
		[ -n "$lc_id" ] && [ -n "$vd_id" ] && [ "$py_id" != "$lc_id" ]; then
		pass "unwind-add-once-per-build-id (python3 id $py_id, libc id $lc_id for 2 processes, vDSO id $vd_id)"
	else
		fail unwind-add-once-per-build-id "exit $rc/$mrc, $adds ADDs: $msgs $(cat "$uw/err")"
	fi
	want100="MAP pid=100 n=3 $py_start-$py_end@$py_bias#$py_id 7fff0000-7fff2000@$vd_bias#$vd_id $lc1-$lc1e@$lc1_bias#$lc_id"
	want200="MAP pid=200 n=1 $lc2-$lc2e@$lc2_bias#$lc_id"
	if [ "$(grep '^MAP pid=100 ' <<<"$msgs" | tail -1)" = "$want100" ] &&
		[ "$(grep '^MAP pid=200 ' <<<"$msgs" | tail -1)" = "$want200" ]; then
		pass "unwind-map-whole-set-with-elf-bias (python3 bias $py_bias, libc $lc1_bias, vDSO $vd_bias)"
	else
		fail unwind-map-whole-set-with-elf-bias "want '$want100' / '$want200': $msgs"
	fi
	if [ "$(grep -c 'differs from the mapped file.s deadbeef; table refused' "$uw/err")" -eq 1 ] &&
		grep -q "^spulse-drain: unwind tables loaded 3 (cache hits 0, .* refused 1 (build-id differs), failed 1, skipped 0; process maps [0-9]* (refused 0)$" "$uw/err" &&
		grep -q "no-such-lib.so.*no table" "$uw/err"; then
		pass unwind-refuses-wrong-build-id-once-and-counts
	else
		fail unwind-refuses-wrong-build-id-once-and-counts "$(cat "$uw/err")"
	fi
	if [ "$(tail -3 <<<"$msgs" | sort)" = "$(printf 'DEL id=%s\nDEL id=%s\nDEL id=%s\n' "$py_id" "$lc_id" "$vd_id" | sort)" ]; then
		pass unwind-dels-its-tables-at-close
	else
		fail unwind-dels-its-tables-at-close "$msgs"
	fi
	if [ -x "$build/spulse" ]; then
		if v=$("$build/spulse" check "$uw/out.spulse" 2>&1); then
			pass unwind-spool-still-valid
		else
			fail unwind-spool-still-valid "$v"
		fi
	fi

	# the same again: all three tables (the vDSO's too) from the cache, the
	# same rows sent
	: > "$uw/d/unwind"
	"$drain_opt" --debugfs "$uw/d" -o "$uw/out2.spulse" --once --no-kallsyms \
		--unwind-cache "$uw/cache" 2>"$uw/err2"
	msgs2=$("$um" dump "$uw/d/unwind" 2>&1)
	if grep -q 'unwind tables loaded 3 (cache hits 3,' "$uw/err2" &&
		[ "$(grep '^ADD' <<<"$msgs2" | awk '{print $7}' | sort)" = "$(printf '%s\n%s\n%s\n' "$py_sum" "$lc_sum" "$vd_sum" | sort)" ]; then
		pass unwind-cache-hit-sends-same-table
	else
		fail unwind-cache-hit-sends-same-table "$(cat "$uw/err2") $msgs2"
	fi

	# --no-unwind-tables: nothing written
	: > "$uw/d/unwind"
	"$drain_opt" --debugfs "$uw/d" -o "$uw/out3.spulse" --once --no-kallsyms \
		--no-unwind-tables 2>"$uw/err3"
	if [ ! -s "$uw/d/unwind" ] && ! grep -q 'unwind tables' "$uw/err3"; then
		pass unwind-no-unwind-tables-writes-nothing
	else
		fail unwind-no-unwind-tables-writes-nothing "$(cat "$uw/err3")"
	fi

	# no DIR/unwind (a module without tables): said once, spool as before
	rm -f "$uw/d/unwind"
	"$drain_opt" --debugfs "$uw/d" -o "$uw/out4.spulse" --once --no-kallsyms 2>"$uw/err4"
	rc=$?
	if [ $rc -eq 0 ] && grep -q "no $uw/d/unwind: the module takes no unwind tables" "$uw/err4" &&
		cmp -s "$uw/out.spulse" "$uw/out4.spulse"; then
		pass unwind-without-debugfs-file-same-spool
	else
		fail unwind-without-debugfs-file-same-spool "exit $rc: $(cat "$uw/err4")"
	fi

	# a live drainer: deactivations arrive later -> the set is sent again
	rm -rf "$uw/live"
	mkdir -p "$uw/live"
	"$um" meta "$uw/live" "M:0:300:$py_start:$py_end:$py_pg:$PY:file" \
		"M:1:300:$lc1:$lc1e:$lc_pg:$LC:file"
	# each step waits for the drainer's answer to the last one (the
	# sanitizer build takes seconds per table on a loaded host), bounded
	"$drain_san" --debugfs "$uw/live" -o "$uw/live.spulse" --no-kallsyms \
		--unwind-cache "$uw/cache" 2>"$uw/errl" &
	dpid=$!
	uw_wait_map() {	# $1: n= of the last MAP the drainer has sent
		local i
		for ((i = 0; i < 1200; i++)); do
			[ "$("$um" dump "$uw/live/unwind" 2>/dev/null |
				grep '^MAP pid=300 ' | tail -n 1 | awk '{print $3}')" = "n=$1" ] &&
				return 0
			kill -0 $dpid 2>/dev/null || return 1
			sleep 0.1
		done
		return 1
	}
	uw_wait_map 2
	"$um" append "$uw/live" "D:1"
	uw_wait_map 1
	"$um" append "$uw/live" "P:300"
	uw_wait_map 0
	kill -INT $dpid 2>/dev/null
	wait $dpid
	rc=$?
	ml=$("$um" dump "$uw/live/unwind" 2>&1)
	got=$(grep '^MAP' <<<"$ml" | awk '{print $2, $3}' | tr '\n' ',')
	# (a MAP may also go out between the two builds: only the end counts)
	if [ $rc -eq 0 ] && [ "${got%pid=300 n=2,pid=300 n=1,pid=300 n=0,}" != "$got" ] &&
		grep -q "^MAP pid=300 n=1 $py_start-$py_end@$py_bias#" <<<"$ml"; then
		pass "unwind-deactivations-resend-the-set ($got)"
	else
		fail unwind-deactivations-resend-the-set "exit $rc: $ml $(cat "$uw/errl")"
	fi

	# spulse record: the summary counts the tables; --unwind checked
	"$um" meta "$uw/d" \
		"M:0:100:$py_start:$py_end:$py_pg:$PY:file" \
		"M:1:100:$lc1:$lc1e:$lc_pg:$LC:file" \
		"M:2:200:$py_start:$py_end:$py_pg:$PY:deadbeef" \
		"M:3:200:500000:600000:0:$uw/no-such-lib.so:-"
	# the command dumps what the fake unwind file holds when it starts:
	# its own tables (sh, its ELF interpreter and libraries as ldd lists
	# them, the vDSO) must be there already (preloaded before release)
	SH=$(readlink -f /bin/sh)
	want_sums=$(for f in "$SH" $(ldd "$SH" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
		"$um" sum "$(readlink -f "$f")"; done; echo "$vd_sum")
	want_sums=$(sort -u <<<"$want_sums")
	out=$("$rec" --debugfs "$uw/d" --no-load -o "$uw/rec.spulse" \
		--kallsyms /dev/null --unwind-cache "$uw/cache" -- /bin/sh -c \
		"echo \$\$ > '$uw/cmd.pid'; '$um' dump '$uw/d/unwind' > '$uw/at-start'; sleep 0.3" 2>&1)
	rc=$?
	at_start=$(grep '^ADD' "$uw/at-start" 2>/dev/null | awk '{print $7}' | sort -u)
	n_want=$(wc -l <<<"$want_sums")
	n_all=$(sort -u <(echo "$want_sums") <(echo "$py_sum") | wc -l)
	# (the loader may have ADDed the fake meta's python3 by then too)
	missing=$(comm -23 <(echo "$want_sums") <(echo "$at_start"))
	if [ $rc -eq 0 ] && [ -n "$at_start" ] && [ -z "$missing" ] && [ "$n_want" -ge 3 ] &&
		grep -q "unwind tables $n_all (cache hits [0-9]*, refused 1, failed 1)" <<<"$out" &&
		[ "$("$um" dump "$uw/d/unwind" | grep -c '^ADD')" -eq "$n_all" ]; then
		pass "record-preloads-command-tables-before-release ($n_want tables at the command's start: sh, ld.so, libs, vDSO; libc not sent twice)"
	else
		fail record-preloads-command-tables-before-release "exit $rc: missing at start: $missing (want $want_sums, at start: $at_start); $out"
	fi
	# held under ptrace at its entry point, the command's own mappings
	# (sh, ld.so, libc, vDSO) were MAPped before its first instruction
	cpid=$(cat "$uw/cmd.pid" 2>/dev/null)
	m0=$(grep "^MAP pid=$cpid " "$uw/at-start" 2>/dev/null | head -1)
	if [ -n "$cpid" ] && [ "$(awk '{ sub("n=", "", $3); print $3 }' <<<"$m0")" = 4 ]; then
		pass "record-maps-the-command-before-its-first-instruction ($m0)"
	else
		fail record-maps-the-command-before-its-first-instruction "pid $cpid: '$m0'; $(cat "$uw/at-start" 2>/dev/null)"
	fi
	# the wait is bounded and said: no cache, python3's 6 files, 1 ms
	: > "$uw/d/unwind"
	out=$("$rec" --debugfs "$uw/d" --no-load -o "$uw/rec3.spulse" \
		--kallsyms /dev/null --unwind-cache "" --unwind-wait 1 -- "$PY" -c pass 2>&1)
	rc=$?
	if [ $rc -eq 0 ] && grep -q 'spulse record: unwind: tables still being built after 1 ms ([0-9]* of [0-9]* files loaded); not waiting for the rest' <<<"$out"; then
		pass record-preload-wait-is-bounded-and-said
	else
		fail record-preload-wait-is-bounded-and-said "exit $rc: $out"
	fi
	"$rec" --unwind-wait x -- true >/dev/null 2>&1
	rc=$?
	[ $rc -eq 2 ] && pass record-usage-bad-unwind-wait || fail record-usage-bad-unwind-wait "exit $rc"
	: > "$uw/d/unwind"
	out=$("$rec" --debugfs "$uw/d" --no-load -o "$uw/rec2.spulse" --kallsyms /dev/null \
		--unwind fp -- true 2>&1)
	rc=$?
	if [ $rc -eq 0 ] && [ ! -s "$uw/d/unwind" ] && ! grep -q 'unwind tables' <<<"$out"; then
		pass record-unwind-fp-loads-no-tables
	else
		fail record-unwind-fp-loads-no-tables "exit $rc: $out"
	fi
	"$rec" --unwind bogus -- true >/dev/null 2>&1
	rc=$?
	[ $rc -eq 2 ] && pass record-usage-bad-unwind-mode || fail record-usage-bad-unwind-mode "exit $rc"
	out=$("$rec" --help 2>&1)
	if grep -q '^NAME' <<<"$out" && grep -q '^SYNOPSIS' <<<"$out" &&
		grep -q '^EXIT STATUS' <<<"$out" && grep -q -- '--unwind MODE' <<<"$out"; then
		pass record-help-is-a-man-page
	else
		fail record-help-is-a-man-page "$out"
	fi
fi

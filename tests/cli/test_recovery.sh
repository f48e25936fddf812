# spulse check on every truncation of a small spool, and on corruption
# crafted at known record offsets.

# The oracle is `spulse dump --offsets` of the full file: a cut at c is
# complete when c is a record boundary, and otherwise recovers the prefix up
# to the last boundary <= c; a cut inside the header (0 bytes too) is an
# error at its end.
test_check_every_truncation() {
	local size
	"$SP" synth -q -o s.spulse --samples 30 --threads 3 --depth 6 --seed 7 ||
		return 1
	size=$(stat -c %s s.spulse)
	[ "$size" -ge 1500 ] && [ "$size" -le 8000 ] ||
		die "spool is $size bytes, wanted a few KB" || return 1
	every_truncation
}

# The same with every extension record kind in the spool: cpu records,
# off-CPU intervals (with and without wakers), triggers, unknown kinds.
test_check_every_truncation_with_extensions() {
	local size k
	"$SP" synth -q -o s.spulse --samples 30 --threads 3 --depth 6 --seed 7 \
		--cpus 2 --off-cpu 14 --triggers 4 --unknown-ext 3 || return 1
	size=$(stat -c %s s.spulse)
	[ "$size" -ge 2000 ] && [ "$size" -le 16000 ] ||
		die "spool is $size bytes, wanted a few KB" || return 1
	"$SP" dump s.spulse >d || return 1
	for k in cpu offcpu trigger ext; do
		grep -q "^$k " d || die "no $k record" || return 1
	done
	grep -q '^offcpu .*waker=none' d && grep -q '^offcpu .*waker_stack=' d ||
		die "intervals lack the waker mix" || return 1
	every_truncation
}

# every_truncation: check every cut of s.spulse against the dump oracle.
every_truncation() {
	local size c rc out b=0 bi=0 want_cb want_rec cb rec n=0 stride
	local -a bounds
	size=$(stat -c %s s.spulse)
	mapfile -t bounds < <(record_offsets s.spulse)
	[ "${#bounds[@]}" -gt 50 ] || die "only ${#bounds[@]} records" || return 1
	stride=${TRUNC_STRIDE:-1}
	for ((c = 0; c <= size; c++)); do
		while [ $bi -lt ${#bounds[@]} ] && [ "${bounds[$bi]}" -le $c ]; do
			b=${bounds[$bi]}
			bi=$((bi + 1))
		done
		# with a stride (sanitizer build), still test around boundaries
		if [ "$stride" -gt 1 ] && [ $((c % stride)) -ne 0 ] &&
		   [ $c -ne $b ] && [ $((c - 1)) -ne $b ] && [ $c -ne $size ]; then
			continue
		fi
		if [ $c -lt "${bounds[0]}" ]; then
			# shorter than the header (0 bytes too): an error at
			# its end (FORMAT.md 6, issue 26)
			head -c $c s.spulse >cut.spulse
			"$SP" check cut.spulse >/dev/null 2>err &&
				die "cut $c: a file shorter than the header passed" ||
				true
			grep -q "^cut.spulse: offset $c: file ends inside the stream header" err ||
				die "cut $c: $(cat err)" || return 1
			continue
		else
			want_cb=$b
			if [ $c -eq $b ]; then want_rec=false; else want_rec=true; fi
		fi
		head -c $c s.spulse >cut.spulse
		out=$("$SP" check --json cut.spulse 2>err)
		rc=$?
		[ $rc -eq 0 ] || die "cut $c: exit $rc: $(cat err)" || return 1
		cb=$(json_field complete_bytes "$out")
		rec=$(json_field recovered "$out")
		[ "$cb" = "$want_cb" ] && [ "$rec" = "$want_rec" ] ||
			die "cut $c: complete_bytes=$cb recovered=$rec," \
			    "wanted $want_cb $want_rec" || return 1
		# Replay must agree, on a sample of the cuts
		if [ $((c % 11)) -eq 0 ]; then
			out=$("$SP" check --json --replay cut.spulse 2>err) ||
				die "cut $c: replay exit: $(cat err)" || return 1
			[ "$(json_field complete_bytes "$out")" = "$want_cb" ] &&
			[ "$(json_field recovered "$out")" = "$want_rec" ] ||
				die "cut $c: replay says $out" || return 1
		fi
		# the text form on a sample of the cuts (one more process each)
		if [ $want_rec = true ] && [ $((c % 29)) -eq 0 ]; then
			"$SP" check cut.spulse >txt 2>&1 || return 1
			grep -q "recovered from truncated tail at offset $want_cb\$" txt ||
				die "cut $c: text lacks the recovery line" || return 1
		fi
		n=$((n + 1))
	done
	echo "checked $n cuts of $size bytes"
}

# corrupt_and_expect WANT_LO WANT_HI FILE: check exits 1 and names an offset
# in [WANT_LO, WANT_HI) (the record's bytes); dump fails as well.
corrupt_and_expect() {
	local off
	expect_rc 1 "$SP" check "$3" || return 1
	off=$(error_offset)
	[ -n "$off" ] || die "no 'offset N:' in: $(cat err)" || return 1
	grep -q "^$3: offset $off: ." err || die "bad format: $(cat err)" ||
		return 1
	[ "$off" -ge "$1" ] && [ "$off" -lt "$2" ] ||
		die "offset $off outside the record [$1, $2): $(cat err)" ||
		return 1
	expect_rc 1 "$SP" check --replay "$3" || return 1
	[ "$(error_offset)" = "$off" ] || die "replay names another offset" ||
		return 1
	expect_rc 1 "$SP" dump "$3"
}

test_corrupt_tag_names_record_offset() {
	local -a bounds
	local i at
	"$SP" synth -q -o s.spulse --samples 200 --seed 8 || return 1
	mapfile -t bounds < <(record_offsets s.spulse)
	# first record, a middle one, the last one
	for i in 0 $((${#bounds[@]} / 2)) $((${#bounds[@]} - 2)); do
		at=${bounds[$i]}
		cp s.spulse bad.spulse
		patch_byte bad.spulse "$at" ee
		corrupt_and_expect "$at" $((at + 1)) bad.spulse || return 1
		# the same with the file also cut inside its last record
		head -c $(( $(stat -c %s bad.spulse) - 1 )) bad.spulse >badcut.spulse
		[ "$at" -ge "${bounds[-2]}" ] ||
			corrupt_and_expect "$at" $((at + 1)) badcut.spulse || return 1
	done
}

test_corrupt_bad_magic_offset_0() {
	"$SP" synth -q -o s.spulse --samples 50 || return 1
	patch_byte s.spulse 3 78
	corrupt_and_expect 0 1 s.spulse
}

# edit_and_expect SED_EXPR KIND: apply SED_EXPR to the first line of KIND in
# the dump of s.spulse, rebuild with spoolgen and expect check to fail inside
# that record (offsets from spoolgen -v, i.e. the crafted file's own layout).
edit_and_expect() {
	local line lo hi
	"$SP" dump s.spulse >d || return 1
	line=$(grep -n "^$2 " d | sed -n "${3:-1}p" | cut -d: -f1)
	[ -n "$line" ] || die "no $2 record" || return 1
	sed "${line}s/$1" d >bad.txt
	cmp -s d bad.txt && { die "edit '$1' changed nothing"; return 1; }
	"$SPOOLGEN" -v <bad.txt >bad.spulse 2>offs || return 1
	# spoolgen -v: "OFFSET KIND" per line of input; line 1 is the header
	lo=$(sed -n "${line}p" offs | cut -d' ' -f1)
	hi=$(sed -n "$((line + 1))p" offs | cut -d' ' -f1)
	[ -n "$hi" ] || hi=$(stat -c %s bad.spulse)
	corrupt_and_expect "$lo" "$hi" bad.spulse
}

test_corrupt_duplicate_thread_id() {
	"$SP" synth -q -o s.spulse --samples 100 --threads 4 || return 1
	edit_and_expect 'id=1 /id=0 /' thread 2
}

test_corrupt_id_gap() {
	"$SP" synth -q -o s.spulse --samples 100 || return 1
	edit_and_expect 'id=3 /id=4 /' frame 4
}

test_corrupt_forward_reference_stack() {
	"$SP" synth -q -o s.spulse --samples 100 || return 1
	# the first sample names a stack id far beyond those defined so far
	edit_and_expect 'stack=[0-9]*/stack=999999/' sample 1
}

test_corrupt_forward_reference_frame() {
	"$SP" synth -q -o s.spulse --samples 100 || return 1
	edit_and_expect 'frame=[0-9]* /frame=888888 /' stack 3
}

test_corrupt_frame_outside_module() {
	"$SP" synth -q -o s.spulse --samples 100 || return 1
	edit_and_expect 'rel=0x[0-9a-f]*/rel=0xfffffffff/' frame 2
}

test_corrupt_unknown_frame_kind() {
	"$SP" synth -q -o s.spulse --samples 100 || return 1
	edit_and_expect 'kind=module/kind=9/' frame 5
}

test_corrupt_bad_python_state() {
	"$SP" synth -q -o s.spulse --samples 100 || return 1
	edit_and_expect 'state=enter/state=7/' python 1
}

test_corrupt_module_deactivated_twice() {
	"$SP" synth -q -o s.spulse --samples 200 || return 1
	"$SP" dump s.spulse >d || return 1
	# duplicate the first module-deactivate line: the copy is the error
	awk '{print} /^module-deactivate / && !done {print; done = 1}' d >bad.txt
	"$SPOOLGEN" -v <bad.txt >bad.spulse 2>offs || return 1
	local line lo hi
	line=$(grep -n '^module-deactivate ' bad.txt | sed -n 2p | cut -d: -f1)
	lo=$(sed -n "${line}p" offs | cut -d' ' -f1)
	hi=$(sed -n "$((line + 1))p" offs | cut -d' ' -f1)
	corrupt_and_expect "$lo" "$hi" bad.spulse
}

test_corrupt_overlong_varint() {
	"$SP" synth -q -o s.spulse --samples 100 || return 1
	"$SP" dump s.spulse >d || return 1
	# a sample whose thread id 0 is spelled overlong (80 00)
	awk '/^sample / && !done {print "raw hex=0502800000"; done = 1} {print}' d \
		>bad.txt
	"$SPOOLGEN" -v <bad.txt >bad.spulse 2>offs || return 1
	local line lo
	line=$(grep -n '^raw ' bad.txt | cut -d: -f1)
	lo=$(sed -n "${line}p" offs | cut -d' ' -f1)
	corrupt_and_expect "$lo" $((lo + 5)) bad.spulse
}

# Extension records (FORMAT.md 3.10): each rule broken in a crafted copy of
# a synthetic spool is reported inside the offending record by both readers.
synth_ext_small() {
	"$SP" synth -q -o s.spulse --samples 200 --threads 4 --cpus 2 \
		--off-cpu 60 --triggers 4 --unknown-ext 2 --seed 5
}

test_corrupt_ext_offcpu_state() {
	synth_ext_small || return 1
	edit_and_expect 'state=[RSDT] /state=9 /' offcpu 3
}

test_corrupt_ext_offcpu_forward_thread() {
	synth_ext_small || return 1
	edit_and_expect ' thread=[0-9]* / thread=999999 /' offcpu 2
}

test_corrupt_ext_offcpu_forward_waker_stack() {
	local n
	synth_ext_small || return 1
	"$SP" dump s.spulse >d || return 1
	n=$(grep '^offcpu ' d | grep -n ' waker_stack=' | sed -n 2p | cut -d: -f1)
	[ -n "$n" ] || die "no interval with a waker" || return 1
	edit_and_expect 'waker_stack=[0-9]* /waker_stack=999999 /' offcpu "$n"
}

test_corrupt_ext_offcpu_runnable_with_waker() {
	local n
	synth_ext_small || return 1
	"$SP" dump s.spulse >d || return 1
	n=$(grep '^offcpu ' d | grep -n ' state=R ' | head -n 1 | cut -d: -f1)
	[ -n "$n" ] || die "no R interval" || return 1
	edit_and_expect 'waker=none/waker=0 waker_stack=0 waker_cpu=0/' offcpu "$n"
}

test_corrupt_ext_offcpu_cpu_out_of_range() {
	synth_ext_small || return 1
	edit_and_expect 'cpu_in=[0-9]* /cpu_in=65536 /' offcpu 4
}

test_corrupt_ext_cpu_out_of_range() {
	synth_ext_small || return 1
	edit_and_expect 'cpu=[0-9]*$/cpu=70000/' cpu 3
}

test_corrupt_ext_trigger_reason_and_window() {
	synth_ext_small || return 1
	edit_and_expect 'reason=[a-z]* /reason=5 /' trigger 2 || return 1
	edit_and_expect 'window_start_ns=[0-9]* /window_start_ns=99999999999999 /' \
		trigger 2
}

test_corrupt_ext_kind_0() {
	synth_ext_small || return 1
	edit_and_expect 'kind=[0-9]* /kind=0 /' ext 1
}

# A length field bigger than the payload: the record's fields end before
# len does ("bytes left over"); and len > 4096 even in a cut file.
test_corrupt_ext_length() {
	local line lo
	synth_ext_small || return 1
	"$SP" dump s.spulse >d || return 1
	# cpu record with len 2 for a 1-byte payload (then one byte of junk)
	awk '/^cpu / && !done {print "raw hex=0901020100"; done = 1; next} {print}' \
		d >bad.txt
	"$SPOOLGEN" -v <bad.txt >bad.spulse 2>offs || return 1
	line=$(grep -n '^raw ' bad.txt | cut -d: -f1)
	lo=$(sed -n "${line}p" offs | cut -d' ' -f1)
	corrupt_and_expect "$lo" $((lo + 5)) bad.spulse || return 1
	grep -q 'length mismatch' err || die "reason: $(cat err)" || return 1
	# kind 7, len 4097 (81 20), and the file ends right there
	head -c "$lo" bad.spulse >big.spulse
	printf '\x09\x07\x81\x20' >>big.spulse
	corrupt_and_expect $((lo + 2)) $((lo + 3)) big.spulse || return 1
	grep -q 'exceeds limit 4096' err || die "reason: $(cat err)"
}

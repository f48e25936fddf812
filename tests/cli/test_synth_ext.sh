# spulse synth --cpus/--off-cpu/--triggers/--unknown-ext: extension records
# (FORMAT.md 3.10) with known content; check and dump count and show them.

synth_ext() {
	"$SP" synth -q -o "$1" --samples 6000 --threads 7 --cpus 3 \
		--off-cpu 2500 --triggers 9 --unknown-ext 6 --seed "${2:-11}"
}

test_synth_ext_same_seed_same_bytes_and_same_samples() {
	synth_ext a.spulse && synth_ext b.spulse || return 1
	cmp a.spulse b.spulse || die "same seed, different bytes" || return 1
	synth_ext c.spulse 12 || return 1
	! cmp -s a.spulse c.spulse || die "seed changed nothing" || return 1
	# the samples (time, thread) are those of the spool without extensions
	"$SP" synth -q -o plain.spulse --samples 6000 --threads 7 --seed 11 ||
		return 1
	"$SP" dump a.spulse | awk '$1 == "sample" {print $3, $4}' >s1 &&
	"$SP" dump plain.spulse | awk '$1 == "sample" {print $3, $4}' >s2 ||
		return 1
	[ "$(wc -l <s1)" -eq 6000 ] || die "$(wc -l <s1) samples" || return 1
	cmp s1 s2 || die "extension options changed the samples"
}

test_synth_ext_counts_in_check_and_dump() {
	local json kind n want
	synth_ext s.spulse || return 1
	expect_rc 0 "$SP" check --json s.spulse || return 1
	json=$(cat out)
	[ "$(json_field offcpu "$json")" = 2500 ] || die "offcpu: $json" || return 1
	[ "$(json_field triggers "$json")" = 9 ] || die "triggers: $json" || return 1
	[ "$(json_field ext_skipped "$json")" = 6 ] || die "skipped: $json" ||
		return 1
	"$SP" dump s.spulse >d || return 1
	for kind in cpu:cpu_records offcpu:offcpu trigger:triggers \
		    ext:ext_skipped sample:samples; do
		n=$(grep -c "^${kind%%:*} " d)
		want=$(json_field "${kind#*:}" "$json") || return 1
		[ "$n" -eq "$want" ] || die "${kind#*:}: json $want, dump $n" ||
			return 1
	done
	[ "$(json_field cpu_records "$json")" -gt 100 ] || die "few cpu records" ||
		return 1
	# the text form has the same numbers
	expect_rc 0 "$SP" check s.spulse || return 1
	grep -q "^offcpu-intervals  *2500$" out && grep -q "^triggers  *9$" out &&
	grep -q "^extensions-skipped  *6$" out &&
	grep -q "^cpu-records  *$(json_field cpu_records "$json")$" out ||
		die "text counts: $(cat out)" || return 1
	# a spool without extensions says 0
	"$SP" synth -q -o p.spulse --samples 100 || return 1
	expect_rc 0 "$SP" check --json p.spulse || return 1
	[ "$(json_field offcpu "$(cat out)")" = 0 ] &&
	[ "$(json_field cpu_records "$(cat out)")" = 0 ] || die "$(cat out)"
}

# The mix the help text promises, read back from dump.
test_synth_ext_interval_shape() {
	synth_ext s.spulse || return 1
	"$SP" dump s.spulse >d || return 1
	awk '
	$1 == "frame" { split($2, a, "="); kind[a[2]] = $3 }
	$1 == "stack" { split($2, a, "="); split($4, b, "="); fr[a[2]] = b[2] }
	$1 == "thread" { split($2, a, "="); ok_thread[a[2]] = 1 }
	$1 == "sample" { for (i = 2; i <= NF; i++) if ($i ~ /^cpu=/) cpus[$i] = 1 }
	$1 == "offcpu" {
		for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		n++; st[f["state"]]++
		if (f["dt_ns"] < 0) back++
		if (!(f["thread"] in ok_thread)) { print "undefined thread"; bad = 1 }
		if (kind[fr[f["stack"]]] != "kind=kernel") {
			print "leaf not a kernel frame: " $0; bad = 1 }
		if (f["state"] == "R" && (f["blocked_ns"] != 0 || f["waker"] != "none")) {
			print "R with blocked time or waker: " $0; bad = 1 }
		if (f["waker"] != "none") {
			w++
			if (f["waker"] == f["thread"]) { print "self waker: " $0; bad = 1 }
			if (kind[fr[f["waker_stack"]]] != "kind=kernel") {
				print "waker leaf not kernel: " $0; bad = 1 }
		}
		if (f["cpu_in"] != f["cpu_out"]) mig++
		if (f["cpu_in"] >= 3 || f["cpu_out"] >= 3) { print "cpu >= 3"; bad = 1 }
		if (f["blocked_ns"] + f["runq_ns"] > 20000000) long++
		delete f
	}
	END {
		printf "%d intervals: R %d S %d D %d T %d, %d wakers, %d migrate, %d back, %d > 20ms, %d cpus\n",
		       n, st["R"], st["S"], st["D"], st["T"], w, mig, back, long, length(cpus)
		if (n != 2500 || st["R"] < 500 || st["S"] < 800 || st["D"] < 250 ||
		    st["T"] < 50 || w < 1000 || mig < 200 || back < 100 ||
		    long < 100 || length(cpus) != 3)
			bad = 1
		exit bad
	}' d || die "interval mix"
}

test_synth_ext_triggers() {
	synth_ext s.spulse || return 1
	"$SP" dump s.spulse | grep '^trigger ' >t || return 1
	[ "$(wc -l <t)" -eq 9 ] || return 1
	# reasons in turn, manual marks unnumbered without a window
	[ "$(awk '{print $4}' t | tr '\n' ' ')" = \
	  "reason=manual reason=signal reason=offcpu reason=runq reason=manual reason=signal reason=offcpu reason=runq reason=manual " ] ||
		die "reasons: $(awk '{print $4}' t)" || return 1
	grep 'reason=manual' t | grep -qv 'seq=0 .*window_start_ns=0 window_end_ns=0 ' &&
		die "manual mark with a number or window" && return 1
	[ "$(grep -v reason=manual t | sed 's/.* seq=\([0-9]*\) .*/\1/' | tr '\n' ' ')" = \
	  "1 2 3 4 5 6 " ] || die "seq not 1..6" || return 1
	grep -q 'reason=offcpu .*text=offcpu>[0-9.]*ms\\x20tid\\x20[0-9]*\\x20state\\x20[RSDT]\\x20' t ||
		die "offcpu trigger text: $(grep reason=offcpu t | head -1)"
}

test_synth_ext_dump_round_trips_through_spoolgen() {
	synth_ext s.spulse || return 1
	"$SP" dump s.spulse >d || return 1
	"$SPOOLGEN" <d >back.spulse || return 1
	cmp s.spulse back.spulse || die "dump lost extension information"
}

test_synth_ext_option_errors() {
	expect_rc 2 "$SP" synth -q -o x.spulse --cpus 0 || return 1
	expect_rc 2 "$SP" synth -q -o x.spulse --cpus 65537 || return 1
	expect_rc 2 "$SP" synth -q -o x.spulse --off-cpu -3 || return 1
	# no samples: the intervals still come, with their definitions
	expect_rc 0 "$SP" synth -q -o z.spulse --samples 0 --off-cpu 50 \
		--triggers 2 || return 1
	expect_rc 0 "$SP" check --json z.spulse || return 1
	[ "$(json_field offcpu "$(cat out)")" = 50 ] &&
	[ "$(json_field samples "$(cat out)")" = 0 ] || die "$(cat out)"
}

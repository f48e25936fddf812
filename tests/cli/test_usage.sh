# Help text and usage errors (exit 2), unreadable input (exit 1).

test_help_everywhere() {
	local c
	expect_rc 0 "$SP" --help || return 1
	for c in record check dump report flame latency export synth diff top; do
		grep -q "^  $c " out || die "top-level help lacks $c" || return 1
	done
	# (the sections of each command's --help: test_help.sh)
	for c in record check dump report flame latency export synth diff top; do
		expect_rc 0 "$SP" "$c" --help || return 1
		grep -q "spulse $c" out ||
			die "$c --help does not name the command" || return 1
		[ ! -s err ] || die "$c --help wrote to stderr" || return 1
	done
}

test_usage_errors_exit_2() {
	"$SP" synth -q -o ok.spulse --samples 10 || return 1
	expect_rc 2 "$SP" || return 1
	expect_rc 2 "$SP" frobnicate || return 1
	expect_rc 2 "$SP" check || return 1
	expect_rc 2 "$SP" check ok.spulse ok.spulse || return 1
	expect_rc 2 "$SP" check --bogus ok.spulse || return 1
	expect_rc 2 "$SP" dump || return 1
	expect_rc 2 "$SP" synth --samples 10 || return 1
	expect_rc 2 "$SP" synth -o x --samples ten || return 1
	expect_rc 2 "$SP" synth -o x --samples -5 || return 1
	expect_rc 2 "$SP" synth -o x --threads 0 || return 1
	expect_rc 2 "$SP" synth -o x --depth 2 || return 1
	[ ! -e x ] || die "synth wrote a file despite a usage error" || return 1
	expect_rc 2 "$SP" report ok.spulse --by nothing || return 1
	expect_rc 2 "$SP" report ok.spulse --top many || return 1
	expect_rc 2 "$SP" flame ok.spulse extra || return 1
	expect_rc 2 "$SP" export ok.spulse || return 1
	expect_rc 2 "$SP" export ok.spulse --format xml || return 1
	grep -q "spulse export" err || die "no message naming the command" ||
		return 1
	expect_rc 2 "$SP" latency || return 1
	expect_rc 2 "$SP" latency ok.spulse --top lots || return 1
	expect_rc 2 "$SP" latency ok.spulse --state Y || return 1
	expect_rc 2 "$SP" latency ok.spulse --metric blocked || return 1
	expect_rc 2 "$SP" flame ok.spulse --metric runq || return 1
	expect_rc 2 "$SP" report ok.spulse --off-cpu --state ',' || return 1
	expect_rc 2 "$SP" export ok.spulse --format trace-event --metric runq ||
		return 1
	expect_rc 2 "$SP" export ok.spulse --format folded --state S
}

test_missing_file_exit_1() {
	local c
	for c in check dump report latency; do
		expect_rc 1 "$SP" "$c" does-not-exist.spulse || return 1
		grep -q "does-not-exist.spulse" err ||
			die "$c: error does not name the file" || return 1
	done
	expect_rc 1 "$SP" flame --folded does-not-exist.spulse
}

# spulse top: batch mode on fixed spools (window, counts, --pid, errors)
# and the live screen in a real terminal: tmux runs `spulse top` while
# tests/cli/top_writer appends to the spool through the Recorder, changing
# its hot function over time; capture-pane must show the top row follow
# it, and q must quit with exit 0 and the terminal modes restored.

TOP_WRITER=$BUILD/tests/cli/top_writer

# top_fn: awk code setting fn to the function of a row (the field after
# the k/u mark) and mark to that mark
TOP_FN='fn = ""; mark = ""; for (i = 1; i < NF; i++) if ($i == "k" || $i == "u") { mark = $i; fn = $(i + 1); break }'

# top_first FILE: the function of the first row of the last block in FILE
top_first() {
	awk "/function \\[module\\]\$/ {getline; $TOP_FN; f = fn} END {print f}" "$1"
}

test_top_batch_block_counts_like_report() {
	build_known || return 1
	expect_rc 0 "$SP" top --iterations 1 known.spulse || return 1
	[ "$(head -n 1 out)" = "spulse top known.spulse" ] ||
		die "title: $(head -1 out)" || return 1
	grep -q '^16 samples in the last 5.0 s, +16 new, 16 read$' out ||
		die "header: $(sed -n 2p out)" || return 1
	awk '$6 == "known_alpha_leaf" {print $2, $4}' out | grep -qx '7 7' ||
		die "alpha row: $(cat out)" || return 1
	awk '$6 == "known_beta_mid" {print $2, $4}' out | grep -qx '3 14' ||
		die "beta row" || return 1
	[ "$(top_first out)" = known_alpha_leaf ] || die "first row" || return 1
	expect_rc 0 "$SP" top --iterations 1 --pid 200 -n 1 known.spulse || return 1
	grep -q '^6 samples of pid 200 in' out && [ "$(grep -c '%' out)" -eq 2 ] ||
		die "--pid 200 -n 1: $(cat out)" || return 1
	[ "$(top_first out)" = known_kernel_fn ] || die "pid 200 first row"
}

# a spool with no sample yet (what a live top sees first): an empty screen,
# exit 0 (the san build aborted here: qsort() of the NULL row array)
# every row: a k/u mark and its module (the file name of a module path,
# [kernel.kallsyms]; an unresolved address names its module already)
test_top_rows_show_kernel_user_mark_and_module() {
	build_known || return 1
	expect_rc 0 "$SP" top --iterations 1 known.spulse || return 1
	awk "{ $TOP_FN } fn == \"known_alpha_leaf\" {print mark, \$NF}" out |
		grep -qx 'u \[known\]' || die "alpha row: $(cat out)" || return 1
	awk "{ $TOP_FN } fn == \"known_kernel_fn\" {print mark, \$NF}" out |
		grep -qx 'k \[kernel.kallsyms\]' || die "kernel row: $(cat out)" ||
		return 1
	[ "$(grep -Ec '^ *[0-9.]+%' out)" -eq "$(awk "{ $TOP_FN } mark != \"\"" out | wc -l)" ] ||
		die "a row without a mark: $(cat out)"
}

# a --pid filter that matches nothing names the filter, not just "0"
test_top_names_the_pid_filter() {
	build_known || return 1
	expect_rc 0 "$SP" top --iterations 1 -p 99999 known.spulse || return 1
	grep -q '^0 samples of pid 99999 in the last 5.0 s, +16 new, 16 read$' out ||
		die "header: $(cat out)" || return 1
	expect_rc 0 "$SP" top --iterations 1 -p 100,200 known.spulse || return 1
	grep -q '^16 samples of pids 100,200 in' out || die "$(cat out)"
}

# at 60 columns (a terminal's width, or $COLUMNS in batch mode) no line is
# longer: the title and the first rows stay on screen
test_top_fits_60_columns() {
	build_known || return 1
	mkdir -p a-rather-long-directory-name/for-the-spool
	cp known.spulse known.spulse.kallsyms a-rather-long-directory-name/for-the-spool/
	COLUMNS=60 expect_rc 0 "$SP" top --iterations 1 \
		a-rather-long-directory-name/for-the-spool/known.spulse || return 1
	awk 'length($0) > 60 {print; bad = 1} END {exit bad}' out ||
		die "lines over 60 columns" || return 1
	grep -q '^16 samples in the last' out || die "$(cat out)" || return 1
	[ "$(top_first out)" = known_alpha_leaf ] || die "rows: $(cat out)" ||
		return 1
	if command -v tmux >/dev/null; then
		local sock=spulse-top60-$$-$RANDOM tm
		tm="tmux -L $sock -f /dev/null"
		$tm new-session -d -x 60 -y 12 -s t "$SP top -n 3 known.spulse; sleep 30" ||
			die "tmux failed" || return 1
		sleep 1.5
		$tm capture-pane -p -t t >screen 2>/dev/null
		$tm send-keys -t t q
		sleep 0.3
		$tm kill-server 2>/dev/null
		grep -q '^spulse top known.spulse' screen &&
			grep -q '^16 samples in the last' screen ||
			die "title scrolled off: $(cat screen)" || return 1
	fi
}

# a spool that stops growing: after a second (and two refreshes) without
# new bytes, the header says so (before: "+0 new" forever)
test_top_says_when_the_writer_stopped() {
	build_known || return 1
	expect_rc 0 "$SP" top --iterations 14 -i 0.1 known.spulse || return 1
	if awk 'NR == 2' out | grep -q 'no new data'; then
		die "stopped at once: $(head -2 out)"
		return 1
	fi
	tail -n 20 out | grep -q '+0 new, 16 read; no new data for [0-9.]* s (writer stopped?)$' ||
		die "last blocks: $(tail -n 20 out)"
}

test_top_spool_without_samples_draws_an_empty_screen() {
	build_known || return 1
	grep -v '^sample' known.txt >e.txt
	"$SPOOLGEN" <e.txt >e.spulse || return 1
	expect_rc 0 "$SP" top --iterations 1 e.spulse || return 1
	grep -q '^0 samples in the last 5.0 s, +0 new, 0 read$' out ||
		die "header: $(sed -n 2p out)" || return 1
	[ "$(grep -c '%' out)" -eq 1 ] || die "rows without samples: $(cat out)"
}

test_top_window_keeps_only_the_last_seconds() {
	build_known || return 1
	grep -v '^sample' known.txt >w.txt
	# alpha for 0..4 s, then beta 4..6 s, 10 samples per second
	awk 'BEGIN {for (i = 0; i < 60; i++)
		printf "sample t=%.0f thread=0 stack=%d\n", i * 100000000, i < 40 ? 2 : 1}' >>w.txt
	"$SPOOLGEN" <w.txt >w.spulse || return 1
	expect_rc 0 "$SP" top --iterations 1 -w 1.5 w.spulse || return 1
	# newest at 5.9 s: the window [4.4, 5.9] holds 16 beta samples
	grep -q '^16 samples in the last 1.5 s' out || die "$(head -2 out)" ||
		return 1
	[ "$(top_first out)" = known_beta_mid ] || die "first: $(cat out)" || return 1
	! grep -q known_alpha_leaf out || die "old alpha samples kept" || return 1
	expect_rc 0 "$SP" top --iterations 1 -w 10 w.spulse || return 1
	[ "$(top_first out)" = known_alpha_leaf ] || die "wide window"
}

test_top_errors_and_usage() {
	build_known || return 1
	# no FILE: top records by itself; a recorder that fails before any
	# spool exits 1 with its status and output (never the real recorder
	# here: it would load spulse.ko into the host kernel)
	printf '#!/bin/sh\necho "fake recorder: no module" >&2\nexit 3\n' >fail_rec
	chmod +x fail_rec
	SPULSE_TOP_RECORD_CMD=$PWD/fail_rec expect_rc 1 "$SP" top -p 1 || return 1
	grep -q 'recorder exited (status 3) before writing a spool' err &&
		grep -q 'fake recorder: no module' err ||
		die "failed recorder: $(cat err)" || return 1
	expect_rc 2 "$SP" top a.spulse b.spulse || return 1
	expect_rc 2 "$SP" top -w 0 known.spulse || return 1
	expect_rc 2 "$SP" top -i 0.001 known.spulse || return 1
	expect_rc 2 "$SP" top -n 0 known.spulse || return 1
	expect_rc 1 "$SP" top --iterations 1 missing.spulse || return 1
	grep -q missing.spulse err || die "error does not name the file" ||
		return 1
	# a bad tag after the header: exit 1 with the offset
	cp known.spulse bad.spulse
	patch_byte bad.spulse "$(record_offsets known.spulse | sed -n 3p)" 7f
	expect_rc 1 "$SP" top --iterations 1 bad.spulse || return 1
	grep -q 'bad.spulse: offset [0-9]*:' err || die "no offset: $(cat err)"
}

# top keeps its own memory out of THP as a recorder does, and starts its
# recorder with THP as top found it (PR_SET_THP_DISABLE is inherited
# across fork and exec; docs/DRAIN.md "The recorder's memory and THP"): a
# fake recorder reads its own THP_enabled and top's (its parent), fails
test_top_thp_off_its_recorder_as_found() {
	local mine
	mine=$(sed -n 's/^THP_enabled:[[:space:]]*//p' /proc/self/status)
	if [ -z "$mine" ]; then
		echo "no THP_enabled line in /proc/self/status"
		return 77
	fi
	cat >thp_rec <<EOS || return 1
#!/bin/sh
sed -n 's/^THP_enabled:[[:space:]]*/recorder /p' /proc/self/status >$PWD/thp.txt
sed -n 's/^THP_enabled:[[:space:]]*/top /p' /proc/\$PPID/status >>$PWD/thp.txt
exit 3
EOS
	chmod +x thp_rec
	SPULSE_TOP_RECORD_CMD=$PWD/thp_rec expect_rc 1 "$SP" top -p 1 || return 1
	grep -qx "recorder $mine" thp.txt && grep -qx 'top 0' thp.txt ||
		die "this shell $mine, seen: $(cat thp.txt 2>&1)"
}

if command -v tmux >/dev/null && [ -x "$TOP_WRITER" ]; then
test_top_live_screen_follows_the_writer_in_tmux() {
	local sock=spulse-top-$$-$RANDOM i first seen_alpha="" seen_beta=""
	local tm="tmux -L $sock -f /dev/null"
	cp "$TOP_WRITER" ./top_writer || return 1
	./top_writer live.spulse alpha:3 beta:600 2>writer.log &
	local wpid=$!
	sleep 0.3
	$tm new-session -d -x 110 -y 20 -s t "sh -c 's=\$(stty -g); $SP top -w 1 -i 0.2 live.spulse; echo rc=\$? >$WORK/rc; [ \"\$(stty -g)\" = \"\$s\" ] && echo restored >$WORK/tty; sleep 30'" ||
		{ kill "$wpid"; die "tmux failed"; return 1; }
	for i in $(seq 1 100); do
		$tm capture-pane -p -t t >screen 2>/dev/null
		first=$(top_first screen)
		[ "$first" = top_alpha ] && seen_alpha=1 && cp screen alpha.screen
		# beta leading with > 80% of the window: alpha has aged out
		[ -n "$seen_alpha" ] && [ "$first" = top_beta ] &&
			awk '$6 == "top_beta" {exit !($1 + 0 > 80)}' screen &&
			! grep -q top_alpha screen && seen_beta=1 && cp screen beta.screen && break
		sleep 0.1
	done
	$tm send-keys -t t q
	for i in $(seq 1 50); do
		[ -f rc ] && break
		sleep 0.1
	done
	$tm kill-server 2>/dev/null
	kill "$wpid" 2>/dev/null
	wait "$wpid" 2>/dev/null
	[ -n "$seen_alpha" ] || die "top_alpha never led: $(cat screen)" || return 1
	[ -n "$seen_beta" ] || die "top_beta never led after alpha: $(cat screen)" ||
		return 1
	# the screen is redrawn in place: one header, the quit hint
	[ "$(grep -c '^spulse top live.spulse' beta.screen)" -eq 1 ] ||
		die "not redrawn in place: $(cat beta.screen)" || return 1
	grep -q '(q quits)' beta.screen || die "no quit hint" || return 1
	[ "$(cat rc 2>/dev/null)" = rc=0 ] || die "q: $(cat rc 2>/dev/null)" ||
		return 1
	[ -f tty ] || die "terminal modes not restored"
}

# spulse top -p PID with no FILE records by itself: a fake recorder
# (SPULSE_TOP_RECORD_CMD, given the arguments spulse record would get)
# runs top_writer into top's private temp file; the screen shows its
# functions, q stops both, the recorder is reaped and the file removed.
test_top_records_by_itself_and_q_stops_both() {
	local sock=spulse-top-$$-$RANDOM i seen="" path rpid
	local tm="tmux -L $sock -f /dev/null"
	cp "$TOP_WRITER" ./top_writer || return 1
	cat >fake_rec <<EOT
#!/bin/sh
echo "\$*" >$WORK/rec.args
echo \$\$ >$WORK/rec.pid
while [ \$# -gt 0 ]; do [ "\$1" = -o ] && out=\$2; shift; done
exec $WORK/top_writer "\$out" alpha:600
EOT
	chmod +x fake_rec
	$tm new-session -d -x 110 -y 20 -s t "sh -c 'SPULSE_TOP_RECORD_CMD=$WORK/fake_rec $SP top -p 4242 -w 1 -i 0.2; echo rc=\$? >$WORK/rc; sleep 30'" ||
		die "tmux failed" || return 1
	for i in $(seq 1 100); do
		$tm capture-pane -p -t t >screen 2>/dev/null
		[ "$(top_first screen)" = top_alpha ] && seen=1 && break
		sleep 0.1
	done
	$tm send-keys -t t q
	for i in $(seq 1 100); do
		[ -f rc ] && break
		sleep 0.1
	done
	$tm kill-server 2>/dev/null
	[ -n "$seen" ] || die "top_alpha never shown: $(cat screen)" || return 1
	grep -q '^spulse top .*/spulse-top\.[^/]*/top\.spulse ' screen ||
		die "header: $(head -1 screen)" || return 1
	[ "$(cat rc 2>/dev/null)" = rc=0 ] || die "q: $(cat rc 2>/dev/null)" ||
		return 1
	read -r _ _ path _ <rec.args
	grep -Eqx 'record -o [^ ]*/spulse-top\.[^/ ]*/top\.spulse -p 4242' rec.args ||
		die "recorder args: $(cat rec.args)" || return 1
	rpid=$(cat rec.pid)
	! kill -0 "$rpid" 2>/dev/null || { kill "$rpid"; die "recorder $rpid still runs"; return 1; }
	[ ! -e "$path" ] && [ ! -e "$(dirname "$path")" ] ||
		die "temp dir left: $(ls -la "$(dirname "$path")")"
}
else
	echo "note: spulse top terminal test not run (needs tmux and $TOP_WRITER)" >&2
fi

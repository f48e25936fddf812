# spulse top: batch mode on fixed spools (window, counts, --pid, errors)
# and the live screen in a real terminal: tmux runs `spulse top` while
# tests/cli/top_writer appends to the spool through the Recorder, changing
# its hot function over time; capture-pane must show the top row follow
# it, and q must quit with exit 0 and the terminal modes restored.

TOP_WRITER=$BUILD/tests/cli/top_writer

# top_first FILE: the function of the first row of the last block in FILE
top_first() {
	awk '/function \[module\]$/ {getline; f = $NF} END {print f}' "$1"
}

test_top_batch_block_counts_like_report() {
	build_known || return 1
	expect_rc 0 "$SP" top --iterations 1 known.spulse || return 1
	grep -q '^spulse top known.spulse: 16 samples in the last 5.0 s, +16 new, 16 read$' out ||
		die "header: $(head -1 out)" || return 1
	awk '$NF == "known_alpha_leaf" {print $2, $4}' out | grep -qx '7 7' ||
		die "alpha row: $(cat out)" || return 1
	awk '$NF == "known_beta_mid" {print $2, $4}' out | grep -qx '3 14' ||
		die "beta row" || return 1
	[ "$(top_first out)" = known_alpha_leaf ] || die "first row" || return 1
	expect_rc 0 "$SP" top --iterations 1 --pid 200 -n 1 known.spulse || return 1
	grep -q ': 6 samples' out && [ "$(grep -c '%' out)" -eq 2 ] ||
		die "--pid 200 -n 1: $(cat out)" || return 1
	[ "$(top_first out)" = known_kernel_fn ] || die "pid 200 first row"
}

# a spool with no sample yet (what a live top sees first): an empty screen,
# exit 0 (the san build aborted here: qsort() of the NULL row array)
test_top_spool_without_samples_draws_an_empty_screen() {
	build_known || return 1
	grep -v '^sample' known.txt >e.txt
	"$SPOOLGEN" <e.txt >e.spulse || return 1
	expect_rc 0 "$SP" top --iterations 1 e.spulse || return 1
	grep -q '^spulse top e.spulse: 0 samples in the last 5.0 s, +0 new, 0 read$' out ||
		die "header: $(head -1 out)" || return 1
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
	grep -q ': 16 samples in the last 1.5 s' out || die "$(head -1 out)" ||
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
			awk '$NF == "top_beta" {exit !($1 + 0 > 80)}' screen &&
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
	[ "$(grep -c '^spulse top live.spulse:' beta.screen)" -eq 1 ] ||
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
	grep -q '^spulse top .*/spulse-top\.[^/]*/top\.spulse: ' screen ||
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

# spulse push and report/flame --clickhouse against a real clickhouse-server.

# Every sample of three synthetic hosts arrives once, under its host.
test_push_counts_per_host() {
	synth_hosts 3 20000 || return 1
	push_hosts 3 || return 1
	local i got
	for i in 1 2 3; do
		got=$(chq "SELECT count() FROM spulse_samples WHERE host = 'host$i'")
		[ "$got" = 20000 ] || die "host$i: $got samples, wanted 20000"
	done
	got=$(chq "SELECT count() FROM spulse_pushes")
	[ "$got" = 3 ] || die "$got pushes committed, wanted 3"
	grep -q 'pushed 20000 samples' push.out || die "no summary line"
}

# report --clickhouse --host H gives exactly the local report of H's spool
# (JSON of every row, and the text table below the title).
test_report_per_host_equals_local() {
	synth_hosts 3 30000 || return 1
	push_hosts 3 || return 1
	local i
	for i in 1 2 3; do
		"$SP" report "h$i.spulse" --json --top 0 >loc.json 2>/dev/null || return 1
		expect_rc 0 "$SP" report --clickhouse "$CH_URL" --database "$DB" \
			--host "host$i" --json --top 0 || return 1
		same out loc.json || return 1
		"$SP" report "h$i.spulse" --top 25 --by total >loc.txt 2>/dev/null || return 1
		expect_rc 0 "$SP" report --clickhouse "$CH_URL" --database "$DB" \
			--host "host$i" --top 25 --by total || return 1
		rows_of out >a; rows_of loc.txt >b
		same a b || return 1
		grep -q "^# clickhouse .*: 30000 samples, host host$i" out ||
			die "title: $(head -n1 out)"
	done
}

# All hosts at once: each row's self/total is the sum over the hosts'
# local reports (as a set of rows), and, with spulse merge, the report of
# the merged spool row for row.
test_report_all_hosts_sums_the_hosts() {
	synth_hosts 3 20000 || return 1
	push_hosts 3 || return 1
	local i
	for i in 1 2 3; do
		"$SP" report "h$i.spulse" --json --top 0 2>/dev/null >"l$i.json" || return 1
	done
	expect_rc 0 "$SP" report --clickhouse "$CH_URL" --database "$DB" \
		--json --top 0 || return 1
	python3 - out l1.json l2.json l3.json <<'PY' || return 1
import json, sys
got = json.load(open(sys.argv[1]))
want, total = {}, 0
for f in sys.argv[2:]:
    r = json.load(open(f))
    total += r["total"]
    for row in r["rows"]:
        k = (row["function"], row["module"])
        s, t = want.get(k, (0, 0))
        want[k] = (s + row["self"], t + row["total"])
rows = {(r["function"], r["module"]): (r["self"], r["total"]) for r in got["rows"]}
assert got["total"] == total == 60000, (got["total"], total)
assert len(rows) == len(got["rows"]), "duplicate rows"
assert rows == want, "rows differ: %d vs %d" % (len(rows), len(want))
order = [(-r["self"], -r["total"]) for r in got["rows"]]
assert order == sorted(order), "not sorted by self, total"
PY
	if "$SP" merge -o m.spulse h1.spulse h2.spulse h3.spulse >/dev/null 2>&1; then
		"$SP" report m.spulse --json --top 0 2>/dev/null >m.json || return 1
		same out m.json || return 1
		echo "compared with spulse merge's spool too"
	fi
}

# --time START,END counts from the earliest pushed sample, as the local
# --time counts from the spool's earliest sample.
test_report_time_window_equals_local() {
	synth_hosts 1 40000 || return 1
	push_hosts 1 || return 1
	"$SP" report h1.spulse --time 3.5,11 --json --top 0 2>/dev/null >loc.json || return 1
	expect_rc 0 "$SP" report --clickhouse "$CH_URL" --database "$DB" \
		--time 3.5,11 --json --top 0 || return 1
	same out loc.json || return 1
	local t
	t=$(python3 -c 'import json,sys; print(json.load(open("out"))["total"])')
	[ "$t" -gt 0 ] && [ "$t" -lt 40000 ] || die "window total $t"
	"$SP" report h1.spulse --time 5, --top 10 2>/dev/null >loc.txt || return 1
	expect_rc 0 "$SP" report --clickhouse "$CH_URL" --database "$DB" \
		--time 5, --top 10 || return 1
	rows_of out >a; rows_of loc.txt >b
	same a b
}

# flame --clickhouse --folded: the local folded stacks, line for line.
test_flame_folded_equals_local() {
	synth_hosts 2 30000 || return 1
	push_hosts 2 || return 1
	local i
	for i in 1 2; do
		"$SP" flame "h$i.spulse" --folded 2>/dev/null >loc.folded || return 1
		expect_rc 0 "$SP" flame --clickhouse "$CH_URL" --database "$DB" \
			--host "host$i" --folded -o ch.folded || return 1
		same ch.folded loc.folded || return 1
	done
	[ "$(wc -l <loc.folded)" -gt 100 ] || die "too few stacks to compare"
}

# flame --clickhouse: the local SVG flame graph byte for byte (same
# title), also as an icicle (--inverted), per host.
test_flame_svg_equals_local() {
	synth_hosts 2 20000 || return 1
	push_hosts 2 || return 1
	local i
	for i in 1 2; do
		"$SP" flame "h$i.spulse" --title T -o loc.svg 2>/dev/null || return 1
		expect_rc 0 "$SP" flame --clickhouse "$CH_URL" --database "$DB" \
			--host "host$i" --title T -o ch.svg || return 1
		same ch.svg loc.svg || return 1
	done
	"$SP" flame h2.spulse --title T --inverted -o loc.svg 2>/dev/null || return 1
	expect_rc 0 "$SP" flame --clickhouse "$CH_URL" --database "$DB" \
		--host host2 --title T --inverted -o ch.svg || return 1
	same ch.svg loc.svg || return 1
	grep -q '<svg' ch.svg || die "not an SVG"
}

# A VM-recorded spool (make demo's demo.spulse, real symbols), when present.
test_vm_spool_report_equals_local() {
	local demo=$TOP/demo.spulse
	# else the spool the e2e suite recorded in this run (make check runs
	# clickhouse after the VM suites)
	[ -s "$demo" ] || demo=$BUILD/e2e/gt/gt.spulse
	if [ ! -s "$demo" ]; then
		echo "no VM-recorded spool (make demo or check-e2e records one)"
		return 77
	fi
	cp "$demo" vm.spulse
	[ -e "$demo.kallsyms" ] && cp "$demo.kallsyms" vm.spulse.kallsyms
	(cd "$TOP" && "$SP" report "$WORK/vm.spulse" --json --top 0) \
		2>/dev/null >loc.json || return 1
	# the spool's own identity names its host (push --host only names
	# spools without one); this test's database holds this spool alone
	(cd "$TOP" && "$SP" push --clickhouse "$CH_URL" --database "$DB" \
		--host vm "$WORK/vm.spulse") >/dev/null 2>&1 || return 1
	expect_rc 0 "$SP" report --clickhouse "$CH_URL" --database "$DB" \
		--json --top 0 || return 1
	same out loc.json
}

# Pushing the same spool again sends nothing and changes no count.
test_repush_adds_nothing() {
	synth_hosts 1 25000 || return 1
	push_hosts 1 || return 1
	local before after
	before=$(chq "SELECT count() FROM spulse_samples"):$(chq "SELECT count() FROM spulse_stacks"):$(chq "SELECT count() FROM spulse_frames")
	expect_rc 0 "$SP" push --clickhouse "$CH_URL" --database "$DB" \
		--host host1 h1.spulse || return 1
	grep -q 'already pushed' out || die "no 'already pushed': $(cat out)"
	after=$(chq "SELECT count() FROM spulse_samples"):$(chq "SELECT count() FROM spulse_stacks"):$(chq "SELECT count() FROM spulse_frames")
	[ "$before" = "$after" ] || die "counts $before -> $after"
	[ "${before%%:*}" = 25000 ] || die "samples $before"
}

# Exact counts of a push: samples as many as the spool holds, each once.
check_exact() {
	local want=$1 got uniq pushes
	got=$(chq "SELECT count() FROM spulse_samples")
	uniq=$(chq "SELECT uniqExact(push_key, time_ns) FROM spulse_samples")
	pushes=$(chq "SELECT count() FROM spulse_pushes")
	[ "$got" = "$want" ] || die "$got samples, wanted $want"
	[ "$uniq" = "$want" ] || die "$uniq distinct samples of $got"
	[ "$pushes" = 1 ] || die "$pushes commit rows"
	got=$(chq "SELECT count() - uniqExact(push_id, stack) FROM spulse_stacks")
	[ "$got" = 0 ] || die "$got duplicate stacks"
	got=$(chq "SELECT count() - uniqExact(push_id, frame) FROM spulse_frames")
	[ "$got" = 0 ] || die "$got duplicate frames"
}

# A push killed with SIGKILL after its 5th INSERT (among the stacks and
# frames), resumed and killed again after 40 more (among the samples):
# nothing is visible to queries meanwhile; the third run completes it with
# every sample once.
test_sigkill_midway_then_resume() {
	synth_hosts 1 60000 || return 1
	local k rc part
	for k in 5 40; do
		SPULSE_PUSH_KILL_AFTER_BATCHES=$k "$SP" push --clickhouse \
			"$CH_URL" --database "$DB" --host host1 --batch 1000 \
			h1.spulse >o1 2>e1
		rc=$?
		[ "$rc" = 137 ] || die "killed push exited $rc, wanted 137 (SIGKILL)"
	done
	part=$(chq "SELECT count() FROM spulse_samples")
	[ "$part" -gt 0 ] && [ "$part" -lt 60000 ] || die "partial count $part"
	expect_rc 0 "$SP" report --clickhouse "$CH_URL" --database "$DB" --json || return 1
	grep -q '"total":0,' out || die "uncommitted samples visible: $(head -c 200 out)"
	expect_rc 0 "$SP" push --clickhouse "$CH_URL" --database "$DB" \
		--host host1 --batch 1000 h1.spulse || return 1
	grep -q "resumed: $part samples were already there" out ||
		die "resume not reported: $(cat out)"
	check_exact 60000 || return 1
	"$SP" report h1.spulse --json --top 0 2>/dev/null >loc.json || return 1
	expect_rc 0 "$SP" report --clickhouse "$CH_URL" --database "$DB" \
		--json --top 0 || return 1
	same out loc.json
}

# A push killed with --batch 1000 and resumed with another --batch keeps
# the first push's batch numbering: still exact.
test_resume_with_other_batch_size() {
	synth_hosts 1 30000 || return 1
	SPULSE_PUSH_KILL_AFTER_BATCHES=30 "$SP" push --clickhouse "$CH_URL" \
		--database "$DB" --host host1 --batch 1000 h1.spulse >/dev/null 2>&1
	[ $? = 137 ] || die "not killed"
	expect_rc 0 "$SP" push --clickhouse "$CH_URL" --database "$DB" \
		--host host1 --batch 7000 h1.spulse || return 1
	grep -q "interrupted push's --batch 1000" err || die "$(cat err)"
	check_exact 30000
}

# The same from outside: kill -9 while INSERTs are under way (at whatever
# point it lands), twice, then resume.
test_external_kill9_then_resume() {
	synth_hosts 1 60000 || return 1
	local round pid n
	for round in 1 2; do
		"$SP" push --clickhouse "$CH_URL" --database "$DB" --host host1 \
			--batch 700 h1.spulse >/dev/null 2>&1 &
		pid=$!
		for _ in $(seq 1 400); do
			n=$(chq "SELECT count() FROM spulse_samples" 2>/dev/null)
			[ "${n:-0}" -gt $((round * 5000)) ] && break
			sleep 0.02
		done
		kill -9 "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	n=$(chq "SELECT count() FROM spulse_pushes")
	[ "$n" = 0 ] || echo "note: a push finished before the kill ($n)"
	expect_rc 0 "$SP" push --clickhouse "$CH_URL" --database "$DB" \
		--host host1 --batch 700 h1.spulse || return 1
	check_exact 60000
}

# A batch found on the server with the wrong row count (as a torn write
# would leave) is deleted and sent again: no duplicates.
test_partial_batch_is_replaced() {
	synth_hosts 1 5000 || return 1
	# the push id (same file, same id), from a push to another database
	"$SP" push --clickhouse "$CH_URL" --database "${DB}x" --host host1 \
		h1.spulse >o1 2>/dev/null || return 1
	local id
	id=$(sed -n 's/.*(push \([0-9a-f]*\)).*/\1/p' o1)
	[ ${#id} = 32 ] || die "no push id in: $(cat o1)"
	ch_post "$CH_URL/" "DROP DATABASE ${DB}x" || return 1
	"$SP" push --clickhouse "$CH_URL" --database "$DB" --host host1 \
		--batch 1000 h1.spulse >/dev/null 2>&1 || return 1
	chq "TRUNCATE TABLE spulse_pushes" 2>/dev/null ||
		chq "ALTER TABLE spulse_pushes DELETE WHERE 1" || return 1
	for _ in $(seq 1 100); do
		[ "$(chq 'SELECT count() FROM spulse_pushes')" = 0 ] && break
		sleep 0.1
	done
	# batch 2 loses rows, batch 3 gets three extra copies
	chq "ALTER TABLE spulse_samples DELETE WHERE batch = 2 AND time_ns % 3 = 0" || return 1
	chq "INSERT INTO spulse_samples SELECT * FROM spulse_samples WHERE batch = 3 LIMIT 3" || return 1
	for _ in $(seq 1 100); do
		[ "$(chq 'SELECT count() FROM system.mutations WHERE is_done = 0')" = 0 ] && break
		sleep 0.1
	done
	[ "$(chq 'SELECT count() FROM spulse_samples')" != 5000 ] || die "setup failed"
	expect_rc 0 "$SP" push --clickhouse "$CH_URL" --database "$DB" \
		--host host1 --batch 1000 h1.spulse || return 1
	grep -q '2 partial batches replaced' out || die "$(cat out)"
	check_exact 5000
}

# A spool corrupt in the middle is refused before anything is sent:
# the error names the byte offset, and no table gets a row.
test_corrupt_spool_sends_nothing() {
	synth_hosts 2 20000 || return 1
	local size
	size=$(stat -c %s h2.spulse)
	printf '\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff' |
		dd of=h2.spulse bs=1 seek=$((size / 2)) conv=notrunc status=none
	expect_rc 1 "$SP" push --clickhouse "$CH_URL" --database "$DB" \
		--host host2 h2.spulse || return 1
	grep -q 'offset [0-9]' err || die "no offset: $(cat err)"
	grep -q 'nothing was sent' err || die "$(cat err)"
	local n
	n=$(chq "SELECT (SELECT count() FROM spulse_samples) + (SELECT count() FROM spulse_stacks) + (SELECT count() FROM spulse_frames) + (SELECT count() FROM spulse_pushes)")
	[ "$n" = 0 ] || die "$n rows after a refused spool"
	# in a list, the good spool goes in and the bad one is reported
	expect_rc 1 "$SP" push --clickhouse "$CH_URL" --database "$DB" \
		--host hostX h1.spulse h2.spulse || return 1
	n=$(chq "SELECT count() FROM spulse_samples")
	[ "$n" = 20000 ] || die "$n samples, wanted h1's 20000"
}

# Nothing listens on the port: a clear error, exit 1, for push and report.
test_refused_connection_is_clear() {
	synth_hosts 1 1000 || return 1
	local port
	port=$(ch_free_port)
	expect_rc 1 "$SP" push --clickhouse "http://127.0.0.1:$port" h1.spulse || return 1
	grep -qi "127.0.0.1:$port.*connect" err || die "$(cat err)"
	expect_rc 1 "$SP" report --clickhouse "http://127.0.0.1:$port" || return 1
	grep -qi "connect" err || die "$(cat err)"
}

# A server answering 500: the status and its text are reported; exit 1.
test_http_500_is_clear() {
	synth_hosts 1 1000 || return 1
	local port
	port=$(ch_free_port)
	python3 - "$port" <<'PY' &
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = b"Code: 241, e.displayText() = DB::Exception: Memory limit exceeded\n"
        self.send_response(500)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
	local spid=$!
	for _ in $(seq 1 50); do
		python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' "$port" 2>/dev/null && break
		sleep 0.1
	done
	expect_rc 1 "$SP" push --clickhouse "http://127.0.0.1:$port" h1.spulse
	local rc=$?
	kill "$spid"; wait "$spid" 2>/dev/null
	[ $rc = 0 ] || return 1
	grep -q 'HTTP 500: Code: 241.*Memory limit exceeded' err || die "$(cat err)"
}

# A server that accepts the connection and never answers: push gives up
# after SPULSE_CH_STALL_TIMEOUT seconds with a clear error (no hang).
test_silent_server_times_out() {
	synth_hosts 1 1000 || return 1
	local port
	port=$(ch_free_port)
	python3 - "$port" <<'PY' &
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(8)
conns = []
while True:
    c, _ = s.accept()
    conns.append(c)      # read nothing, answer nothing
PY
	local spid=$!
	for _ in $(seq 1 50); do
		python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' "$port" 2>/dev/null && break
		sleep 0.1
	done
	SPULSE_CH_STALL_TIMEOUT=2 timeout 60 "$SP" push \
		--clickhouse "http://127.0.0.1:$port" h1.spulse >out 2>err
	local rc=$?
	kill "$spid"; wait "$spid" 2>/dev/null
	[ $rc = 1 ] || die "exit $rc, wanted 1 (124 = hung): $(cat err)"
	grep -qi 'timeout\|timed out' err || die "$(cat err)"
}

# The server refuses the INSERTs midway (spulse_samples replaced by a
# table without the columns): a clear error, exit 1; once the table is
# back, the same push completes with every sample once.
test_refused_midway_then_resume() {
	synth_hosts 1 20000 || return 1
	SPULSE_PUSH_KILL_AFTER_BATCHES=6 "$SP" push --clickhouse "$CH_URL" \
		--database "$DB" --host host1 --batch 2000 h1.spulse >/dev/null 2>&1
	chq "RENAME TABLE spulse_samples TO kept" || return 1
	chq "CREATE TABLE spulse_samples (x UInt8) ENGINE = Memory" || return 1
	expect_rc 1 "$SP" push --clickhouse "$CH_URL" --database "$DB" \
		--host host1 --batch 2000 h1.spulse || return 1
	grep -q 'stopped: .*HTTP [45][0-9][0-9]: .*' err || die "$(cat err)"
	grep -q 'run the same push again' err || die "$(cat err)"
	chq "DROP TABLE spulse_samples" || return 1
	chq "RENAME TABLE kept TO spulse_samples" || return 1
	expect_rc 0 "$SP" push --clickhouse "$CH_URL" --database "$DB" \
		--host host1 --batch 2000 h1.spulse || return 1
	check_exact 20000
}

# Usage: --clickhouse takes no FILE; flame needs --folded; a bad database
# name; options the server side does not do.
test_clickhouse_usage_errors() {
	expect_rc 2 "$SP" report --clickhouse "$CH_URL" x.spulse || return 1
	expect_rc 2 "$SP" flame --clickhouse "$CH_URL" x.spulse || return 1
	expect_rc 2 "$SP" flame --clickhouse "$CH_URL" --root comm || return 1
	grep -q 'supports' err || die "$(cat err)"
	expect_rc 2 "$SP" report --clickhouse "$CH_URL" --database 'a;b' || return 1
	expect_rc 2 "$SP" report --clickhouse "$CH_URL" --sort comm || return 1
	expect_rc 2 "$SP" push h.spulse || return 1
	expect_rc 2 "$SP" push --clickhouse "$CH_URL" || return 1
	expect_rc 0 "$SP" push --help || return 1
	grep -q 'idempotent' out || die "help"
}

# Nothing pushed yet: report says so.
test_report_empty_database_is_clear() {
	expect_rc 1 "$SP" report --clickhouse "$CH_URL" --database "$DB" || return 1
	grep -q 'nothing pushed yet' err || die "$(cat err)"
}

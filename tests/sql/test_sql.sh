# spulse sql: the views against spulse report / flame on the same spools,
# incremental loads, corruption, crash mid-load.

test_sql_usage_errors() {
	expect_rc 2 "$SP" sql || return 1
	expect_rc 2 "$SP" sql only.db || return 1
	[ ! -e only.db ] || die "usage error created the database" || return 1
	expect_rc 2 "$SP" sql --bogus x.db y.spulse || return 1
	expect_rc 0 "$SP" sql --help || return 1
	grep -q top_functions out || die "help does not name the views"
}

test_sql_recursion_counted_once_per_sample() {
	rec_spool || return 1
	expect_rc 0 "$SP" sql r.db rec.spulse || return 1
	# numbers from the spool's definition (lib.sh rec_spool)
	[ "$(q r.db "SELECT self, total FROM top_functions WHERE function = 'main_fn'")" = "0|10" ] ||
		die "main_fn: $(q r.db "SELECT * FROM top_functions")" || return 1
	[ "$(q r.db "SELECT self, total FROM top_functions WHERE function = 'rec_fn'")" = "3|10" ] ||
		die "rec_fn counted more than once per sample" || return 1
	[ "$(q r.db "SELECT self, total FROM top_functions WHERE function = 'leaf_fn'")" = "7|7" ] ||
		die "leaf_fn: $(q r.db "SELECT * FROM top_functions")" || return 1
	same_as_report r.db "SELECT * FROM top_functions" rec.spulse || return 1
	same_as_folded r.db "SELECT stack || ' ' || samples FROM folded_stacks" rec.spulse
}

test_sql_known_elf_functions_lines_and_report() {
	build_known || return 1
	expect_rc 0 "$SP" sql k.db known.spulse || return 1
	same_as_report k.db "SELECT * FROM top_functions" known.spulse || return 1
	same_as_folded k.db "SELECT stack || ' ' || samples FROM folded_stacks" known.spulse || return 1
	# symbol, source file and line of the frames, as report --sort srcline
	"$SP" report known.spulse --sort sym,srcline --json --top 0 >want.json || return 1
	qjson k.db "SELECT fn.name AS function, coalesce(f.file || ':' || f.line, '??:0') AS srcline
		FROM frames f JOIN functions fn USING (function)" >got.json || return 1
	python3 - want.json got.json <<'PY' || die "srclines differ" || return 1
import json, sys
want = {(r["function"], r["srcline"]) for r in json.load(open(sys.argv[1]))["rows"]}
got = {(r["function"], r["srcline"]) for r in json.load(open(sys.argv[2]))}
print("want", sorted(want)); print("got ", sorted(got))
sys.exit(want != got)
PY
	[ "$(q k.db "SELECT symbol, kind, file LIKE '%known.c', line > 0 FROM frame_symbols WHERE function = 'known_alpha_leaf'")" = "known_alpha_leaf|module|1|1" ] ||
		die "alpha frame: $(q k.db "SELECT * FROM frame_symbols")" || return 1
	[ "$(q k.db "SELECT kind, symbol FROM frame_symbols WHERE function = 'known_kernel_fn'")" = "kernel|known_kernel_fn" ] ||
		die "kernel frame not symbolized through the kallsyms sidecar" || return 1
	[ "$(q k.db "SELECT path FROM modules ORDER BY path")" = "$(printf '%s\n%s' /nonexistent/libgone.so "$WORK/known")" ] ||
		die "modules: $(q k.db "SELECT * FROM modules")"
}

test_sql_absolute_times_and_threads() {
	build_known || return 1
	expect_rc 0 "$SP" sql k.db known.spulse || return 1
	# header start_us=1000000, samples every 1000 ns from 1000 ns
	[ "$(q k.db "SELECT min(time_ns), max(time_ns), count(*) FROM samples")" = "1000001000|1000016000|16" ] ||
		die "times: $(q k.db "SELECT min(time_ns), max(time_ns), count(*) FROM samples")" || return 1
	[ "$(q k.db "SELECT pid, tid, comm, samples FROM thread_summary")" = "$(printf '100|100|known|10\n200|201|other|6')" ] ||
		die "thread_summary: $(q k.db "SELECT * FROM thread_summary")" || return 1
	"$SP" report known.spulse --sort pid,tid,comm,sym --json --top 0 >want.json || return 1
	qjson k.db "SELECT * FROM thread_functions" >got.json || return 1
	python3 "$SQL_HERE/cmp_rows.py" pid,tid,comm,function,module,self,total \
		want.json got.json || die "thread_functions differ from report --sort pid,tid,comm,sym"
}

test_sql_synth_views_equal_report_and_flame() {
	"$SP" synth -o s.spulse --samples 30000 --threads 7 --cpus 4 --kallsyms -q || return 1
	expect_rc 0 "$SP" sql s.db s.spulse || return 1
	[ "$(q s.db "SELECT count(*), count(cpu) FROM samples")" = "30000|30000" ] ||
		die "samples/cpus: $(q s.db "SELECT count(*), count(cpu) FROM samples")" || return 1
	same_as_report s.db "SELECT * FROM top_functions" s.spulse || return 1
	same_as_folded s.db "SELECT stack || ' ' || samples FROM folded_stacks" s.spulse || return 1
	# the view and an explicit recursive CTE written here agree
	q s.db "WITH RECURSIVE up(spool, leaf, node, path) AS (
		  SELECT s.spool, s.stack, s.parent, fn.name FROM (SELECT DISTINCT spool, stack FROM samples) l
		    JOIN stacks s USING (spool, stack) JOIN frames f ON f.spool = s.spool AND f.frame = s.frame
		    JOIN functions fn USING (function)
		  UNION ALL
		  SELECT u.spool, u.leaf, s.parent, fn.name || ';' || u.path FROM up u
		    JOIN stacks s ON s.spool = u.spool AND s.stack = u.node
		    JOIN frames f ON f.spool = s.spool AND f.frame = s.frame JOIN functions fn USING (function))
		SELECT u.path || ' ' || count(*) FROM samples x JOIN up u ON u.spool = x.spool AND u.leaf = x.stack
		WHERE u.node IS NULL GROUP BY u.path" | LC_ALL=C sort >cte.folded || return 1
	cmp -s cte.folded want.folded || die "hand-written CTE differs from flame --folded"
}

test_sql_offcpu_views_equal_report() {
	"$SP" synth -o o.spulse --samples 5000 --threads 5 --off-cpu 3000 --kallsyms -q || return 1
	expect_rc 0 "$SP" sql o.db o.spulse || return 1
	[ "$(q o.db "SELECT count(*) FROM offcpu")" = 3000 ] || die "intervals: $(q o.db "SELECT count(*) FROM offcpu")" || return 1
	"$SP" report --off-cpu --sched-leaf --json --top 0 o.spulse >want.json || return 1
	qjson o.db "SELECT * FROM offcpu_functions" >got.json || return 1
	python3 "$SQL_HERE/cmp_rows.py" --ordered --rename self=self_ns,total=total_ns \
		function,module,self,total want.json got.json || die "offcpu_functions differ" || return 1
	same_as_folded o.db "SELECT stack || ' ' || ns FROM offcpu_folded" --off-cpu o.spulse || return 1
	same_as_report o.db "SELECT * FROM top_functions" o.spulse
}

test_sql_incremental_readd_adds_nothing() {
	"$SP" synth -o a.spulse --samples 4000 --seed 1 -q || return 1
	"$SP" synth -o b.spulse --samples 3000 --seed 2 -q || return 1
	expect_rc 0 "$SP" sql db a.spulse || return 1
	local c1 c2
	c1=$(counts db)
	expect_rc 0 "$SP" sql db a.spulse || return 1
	grep -q "already in db" out || die "no 'already' line: $(cat out)" || return 1
	[ "$(counts db)" = "$c1" ] || die "re-adding changed: $c1 -> $(counts db)" || return 1
	# the same bytes under another name are the same recording
	cp a.spulse copy.spulse
	expect_rc 0 "$SP" sql db copy.spulse || return 1
	[ "$(counts db)" = "$c1" ] || die "a copy was added again" || return 1
	# a new spool adds only itself, in one run with the old ones
	expect_rc 0 "$SP" sql db a.spulse b.spulse a.spulse || return 1
	grep -q "1 spool added, 2 already present" out || die "summary: $(tail -n 1 out)" || return 1
	[ "$(q db "SELECT count(*) FROM samples")" = 7000 ] || die "samples: $(q db "SELECT count(*) FROM samples")" || return 1
	[ "$(q db "SELECT count(*) FROM recordings")" = 2 ] || return 1
	c2=$(counts db)
	expect_rc 0 "$SP" sql db b.spulse a.spulse || return 1
	[ "$(counts db)" = "$c2" ] || die "third run changed the database" || return 1
	# the stored hash is the file's SHA-256
	[ "$(q db "SELECT content_sha256 FROM spools WHERE file = 'b.spulse'")" = "$(sha256sum b.spulse | cut -d' ' -f1)" ] ||
		die "content hash is not sha256sum's"
}

test_sql_per_recording_rows_equal_each_report() {
	"$SP" synth -o a.spulse --samples 6000 --seed 11 --kallsyms -q || return 1
	"$SP" synth -o b.spulse --samples 5000 --seed 12 --threads 4 --kallsyms -q || return 1
	expect_rc 0 "$SP" sql db a.spulse b.spulse || return 1
	local f rec
	for f in a.spulse b.spulse; do
		rec=$(q db "SELECT recording FROM recordings WHERE file = '$f'")
		[ -n "$rec" ] || die "no recording for $f" || return 1
		same_as_report db "SELECT function, module, self, total FROM recording_functions WHERE recording = $rec" "$f" ||
			return 1
	done
	# the whole database is the sum of both
	"$SP" report --json --top 0 a.spulse >ra.json && "$SP" report --json --top 0 b.spulse >rb.json || return 1
	qjson db "SELECT * FROM top_functions" >got.json || return 1
	python3 - ra.json rb.json got.json <<'PY' || die "top_functions is not the sum of the two reports"
import json, sys
from collections import Counter
s, t = Counter(), Counter()
for p in sys.argv[1:3]:
    for r in json.load(open(p))["rows"]:
        s[(r["function"], r["module"])] += r["self"]
        t[(r["function"], r["module"])] += r["total"]
got = json.load(open(sys.argv[3]))
gs = Counter({(r["function"], r["module"]): r["self"] for r in got})
gt = Counter({(r["function"], r["module"]): r["total"] for r in got})
sys.exit(not (+s == +gs and +t == +gt))
PY
}

test_sql_hosts_per_host_rows_equal_each_report() {
	# needs recording identities in spools (issue 12 Deliver 1)
	if ! "$SP" synth --help 2>&1 | grep -q -- --host; then
		echo "spulse synth has no --host yet (recording identities not in libspulse)"
		return 77
	fi
	"$SP" synth -o web1.spulse --samples 6000 --seed 21 --host web1 --kallsyms -q || return 1
	"$SP" synth -o web2.spulse --samples 4000 --seed 22 --host web2 --kallsyms -q || return 1
	expect_rc 0 "$SP" sql db web1.spulse web2.spulse || return 1
	[ "$(q db "SELECT host, samples FROM host_summary ORDER BY host")" = "$(printf 'web1|6000\nweb2|4000')" ] ||
		die "host_summary: $(q db "SELECT * FROM host_summary")" || return 1
	local h
	for h in web1 web2; do
		same_as_report db "SELECT function, module, self, total FROM host_functions WHERE host = '$h'" "$h.spulse" ||
			return 1
		same_as_folded db "SELECT stack || ' ' || samples FROM host_folded WHERE host = '$h'" "$h.spulse" ||
			return 1
	done
	[ "$(q db "SELECT count(DISTINCT recording_id), min(length(recording_id)) FROM recordings")" = "2|32" ] ||
		die "recording ids: $(q db "SELECT * FROM recordings")" || return 1
	# the same recordings inside a merged spool are not added again
	"$SP" merge --help >/dev/null 2>&1 || return 0
	local c
	c=$(counts db)
	expect_rc 0 "$SP" merge -o m.spulse web2.spulse web1.spulse || return 1
	expect_rc 0 "$SP" sql db m.spulse || return 1
	grep -q "m.spulse: already in db (2 recordings)" out || die "merged re-add: $(cat out)" || return 1
	[ "$(counts db)" = "$c" ] || die "merged spool of known recordings changed the database"
}

test_sql_corrupt_spool_reports_offset_and_changes_nothing() {
	build_known || return 1
	"$SP" synth -o good.spulse --samples 2000 -q || return 1
	expect_rc 0 "$SP" sql db good.spulse || return 1
	sqlite3 db .dump >before.sql || return 1
	# a bad tag at the 10th record boundary
	local off
	off=$(record_offsets known.spulse | sed -n 10p)
	[ -n "$off" ] || die "no offsets" || return 1
	cp known.spulse bad.spulse
	patch_byte bad.spulse "$off" 7f
	expect_rc 1 "$SP" sql db bad.spulse || return 1
	[ "$(error_offset)" = "$off" ] || die "error offset $(error_offset), wanted $off: $(cat err)" || return 1
	grep -q "bad.spulse: not loaded (database unchanged" err || die "no 'not loaded' line: $(cat err)" || return 1
	sqlite3 db .dump >after.sql || return 1
	cmp -s before.sql after.sql || die "database changed by a corrupt spool" || return 1
	# the good inputs of the same run are loaded, the status is 1
	expect_rc 1 "$SP" sql db bad.spulse known.spulse || return 1
	grep -q "1 spool added, 0 already present, 1 failed" out || die "summary: $(tail -n 1 out)" || return 1
	[ "$(q db "SELECT count(*) FROM recordings")" = 2 ] || return 1
	# not a database: refused, the file is untouched
	echo "not sqlite" >notdb
	cp notdb notdb.orig
	expect_rc 1 "$SP" sql notdb good.spulse || return 1
	grep -q "notdb" err || die "no file name in: $(cat err)" || return 1
	cmp -s notdb notdb.orig || die "non-database file modified"
}

test_sql_truncated_spool_loads_as_recovered() {
	build_known || return 1
	local size
	size=$(stat -c %s known.spulse)
	head -c $((size - 1)) known.spulse >cut.spulse
	expect_rc 0 "$SP" sql db cut.spulse || return 1
	grep -q "recovered from truncated tail" err || die "no recovered note: $(cat err)" || return 1
	[ "$(q db "SELECT recovered FROM spools")" = 1 ] || return 1
	[ "$(q db "SELECT count(*) FROM samples")" = 15 ] || die "samples: $(q db "SELECT count(*) FROM samples")"
}

test_sql_killed_mid_load_leaves_no_partial_recording() {
	[ "$FLAVOUR" = opt ] || { echo "opt binary only (timing)"; return 77; }
	"$SP" synth -o small.spulse --samples 1000 -q || return 1
	"$SP" synth -o big.spulse --samples 2000000 --seed 5 -q || return 1
	expect_rc 0 "$SP" sql db small.spulse || return 1
	local before pid i wal=0
	before=$(counts db)
	"$SP" sql db big.spulse >load.out 2>&1 &
	pid=$!
	# kill it once the transaction has spilled pages into the WAL
	for i in $(seq 1 600); do
		wal=$(stat -c %s db-wal 2>/dev/null || echo 0)
		[ "$wal" -gt 4000000 ] && break
		kill -0 $pid 2>/dev/null || break
		sleep 0.05
	done
	kill -9 $pid 2>/dev/null || die "load finished before it could be killed (wal $wal bytes)" || return 1
	wait $pid 2>/dev/null
	[ "$wal" -gt 4000000 ] || die "killed before the load wrote (wal $wal)" || return 1
	[ "$(q db "PRAGMA integrity_check")" = ok ] || die "integrity check failed" || return 1
	[ "$(counts db)" = "$before" ] || die "partial load visible: $before -> $(counts db)" || return 1
	expect_rc 0 "$SP" sql db big.spulse || return 1
	[ "$(q db "SELECT count(*) FROM samples")" = 2001000 ] || die "reload: $(q db "SELECT count(*) FROM samples")"
}

test_sql_vm_recorded_spool_equals_report() {
	local f
	# make demo's spool, else the one the e2e suite recorded in this run
	# (make check runs sql after the VM suites)
	for f in "$SQL_TOP/build/demo/demo.spulse" "$SQL_TOP/demo.spulse" \
		"$BUILD/e2e/gt/gt.spulse"; do
		[ -s "$f" ] && break
	done
	[ -s "$f" ] || { echo "no VM-recorded spool (make demo or check-e2e)"; return 77; }
	cp "$f" vm.spulse
	[ -e "$f.kallsyms" ] && cp "$f.kallsyms" vm.spulse.kallsyms
	expect_rc 0 "$SP" sql db vm.spulse || return 1
	same_as_report db "SELECT * FROM top_functions" vm.spulse || return 1
	same_as_folded db "SELECT stack || ' ' || samples FROM folded_stacks" vm.spulse || return 1
	# a VM-recorded off-CPU spool (make demo-latency, else the record-vm
	# suite's), when present
	f=$SQL_TOP/build/demo-latency/stall-001.spulse
	[ -s "$f" ] || f=$BUILD/record-vm/oc.spulse
	[ -s "$f" ] || return 0
	cp "$f" stall.spulse
	[ -e "$f.kallsyms" ] && cp "$f.kallsyms" stall.spulse.kallsyms
	expect_rc 0 "$SP" sql o.db stall.spulse || return 1
	[ "$(q o.db "SELECT count(*) FROM offcpu")" -gt 0 ] || die "no intervals loaded" || return 1
	"$SP" report --off-cpu --sched-leaf --json --top 0 stall.spulse >want.json || return 1
	qjson o.db "SELECT * FROM offcpu_functions" >got.json || return 1
	python3 "$SQL_HERE/cmp_rows.py" --ordered --rename self=self_ns,total=total_ns \
		function,module,self,total want.json got.json || die "offcpu_functions differ" || return 1
	same_as_report o.db "SELECT * FROM top_functions" stall.spulse
}

test_sql_sample_counts_match_samples_and_time_window_query() {
	"$SP" synth -o s.spulse --samples 30000 --threads 7 --seed 3 --kallsyms -q || return 1
	expect_rc 0 "$SP" sql s.db s.spulse || return 1
	# the counts the views read equal a GROUP BY over the samples table
	q s.db "SELECT spool, thread, stack, recording, count(*), min(time_ns), max(time_ns)
		FROM samples GROUP BY spool, thread, stack ORDER BY 1, 2, 3" >grouped || return 1
	q s.db "SELECT spool, thread, stack, recording, samples, first_ns, last_ns
		FROM sample_counts ORDER BY 1, 2, 3" >counted || return 1
	[ -s grouped ] && cmp -s grouped counted || die "sample_counts differ from the samples" || return 1
	# a time window over the samples table (docs/FLEET.md) = report --time
	same_as_report s.db "WITH o AS (SELECT min(time_ns) AS t0 FROM samples),
		w AS (SELECT spool, stack, count(*) AS n FROM samples, o
		      WHERE time_ns >= t0 + 2000000000 AND time_ns < t0 + 5000000000
		      GROUP BY spool, stack)
		SELECT f.name AS function, f.module AS module,
		       sum(w.n * sf.self) AS self, sum(w.n) AS total
		FROM w JOIN stack_functions sf USING (spool, stack)
		     JOIN functions f USING (function)
		GROUP BY f.function ORDER BY self DESC, total DESC, f.name, f.key_module" \
		--time 2,5 s.spulse || return 1
	grep -q '"total":[1-9]' want.json || die "empty window"
}

test_sql_merged_spool_hosts_equal_input_reports() {
	# needs spulse merge (issue 12 Deliver 2), which gives every input a
	# recording identity (an input without one: host from its file name)
	if "$SP" merge --help 2>&1 | grep -q "not built yet"; then
		echo "spulse merge is not built yet"
		return 77
	fi
	"$SP" synth -o web1.spulse --samples 6000 --seed 31 --kallsyms -q || return 1
	"$SP" synth -o web2.spulse --samples 4000 --seed 32 --threads 4 --kallsyms -q || return 1
	expect_rc 0 "$SP" merge -o m.spulse web1.spulse web2.spulse || return 1
	[ -e m.spulse.kallsyms ] || cp web1.spulse.kallsyms m.spulse.kallsyms
	expect_rc 0 "$SP" sql db m.spulse || return 1
	[ "$(q db "SELECT count(*), count(DISTINCT host), count(recording_id) FROM recordings")" = "2|2|2" ] ||
		die "recordings: $(q db "SELECT * FROM recordings")" || return 1
	local h f
	for f in web1 web2; do
		h=$(q db "SELECT host FROM recordings WHERE host LIKE '%$f%'")
		[ -n "$h" ] || die "no host for $f: $(q db "SELECT host FROM recordings")" || return 1
		same_as_report db "SELECT function, module, self, total FROM host_functions WHERE host = '$h'" \
			"$f.spulse" || return 1
		same_as_folded db "SELECT stack || ' ' || samples FROM host_folded WHERE host = '$h'" \
			"$f.spulse" || return 1
	done
	local c
	c=$(counts db)
	expect_rc 0 "$SP" sql db m.spulse || return 1
	[ "$(counts db)" = "$c" ] || die "re-adding the merged spool changed the database"
}

test_sql_concurrent_loads_into_one_database_both_land() {
	"$SP" synth -o a.spulse --samples 200000 --seed 41 -q || return 1
	"$SP" synth -o b.spulse --samples 150000 --seed 42 -q || return 1
	"$SP" sql -q db a.spulse >a.out 2>a.err &
	local pa=$!
	"$SP" sql -q db b.spulse >b.out 2>b.err &
	local pb=$!
	wait $pa || die "load a failed: $(cat a.err)" || return 1
	wait $pb || die "load b failed: $(cat b.err)" || return 1
	[ "$(q db "SELECT count(*) FROM recordings")" = 2 ] || return 1
	[ "$(q db "SELECT count(*) FROM samples")" = 350000 ] ||
		die "samples: $(q db "SELECT count(*) FROM samples")" || return 1
	same_as_report db "SELECT function, module, self, total FROM recording_functions
		WHERE recording = (SELECT recording FROM recordings WHERE file = 'b.spulse')" b.spulse
}

test_sql_host_option_per_host_rows_equal_each_report() {
	"$SP" synth -o web1.spulse --samples 6000 --seed 21 --kallsyms -q || return 1
	"$SP" synth -o web2.spulse --samples 4000 --seed 22 --threads 4 --kallsyms -q || return 1
	expect_rc 2 "$SP" sql db --host "" web1.spulse || return 1
	expect_rc 0 "$SP" sql db --host web1 web1.spulse || return 1
	expect_rc 0 "$SP" sql db --host web2 web2.spulse || return 1
	[ "$(q db "SELECT host, recordings, samples FROM host_summary ORDER BY host")" = "$(printf 'web1|1|6000\nweb2|1|4000')" ] ||
		die "host_summary: $(q db "SELECT * FROM host_summary")" || return 1
	local h
	for h in web1 web2; do
		same_as_report db "SELECT function, module, self, total FROM host_functions WHERE host = '$h'" \
			"$h.spulse" || return 1
		same_as_folded db "SELECT stack || ' ' || samples FROM host_folded WHERE host = '$h'" \
			"$h.spulse" || return 1
	done
	# host percentages are of the host's own samples
	"$SP" report --json --top 1 web2.spulse >top.json || return 1
	[ "$(q db "SELECT self_pct FROM host_functions WHERE host = 'web2' LIMIT 1")" = \
	  "$(python3 -c 'import json,sys; d=json.load(open("top.json")); print(round(100.0*d["rows"][0]["self"]/d["total"], 2))')" ] ||
		die "host self_pct is not of the host's samples" || return 1
	# same bytes again under another --host: still the same recording
	expect_rc 0 "$SP" sql db --host elsewhere web1.spulse || return 1
	grep -q "already in db" out || die "re-added under another host"
}

# Helpers of the sql suite (sourced by run.sh after tests/cli/lib.sh).

# q DB SQL: run SQL with the sqlite3 shell (list mode, '|' separator).
q() {
	sqlite3 -batch -bail "$1" "$2"
}

# qjson DB SQL: the result as a JSON array (sqlite3 -json).
qjson() {
	sqlite3 -batch -bail -json "$1" "$2"
}

# counts DB: "table=rows ..." of every table, for before/after checks.
counts() {
	local t out=
	for t in spools recordings threads modules functions frames stacks \
		stack_functions samples offcpu; do
		out="$out $t=$(q "$1" "SELECT count(*) FROM $t")"
	done
	echo "$out"
}

# same_as_report DB VIEW_SQL REPORT_ARGS...: the rows of `spulse report
# --json --top 0 REPORT_ARGS` equal VIEW_SQL's rows (function, module,
# self, total), in the same order.
same_as_report() {
	local db=$1 sql=$2
	shift 2
	"$SP" report --json --top 0 "$@" >want.json 2>report.err ||
		die "report $* failed: $(cat report.err)" || return 1
	qjson "$db" "$sql" >got.json || die "query failed: $sql" || return 1
	python3 "$SQL_HERE/cmp_rows.py" --ordered function,module,self,total \
		want.json got.json || die "$sql differs from report $*"
}

# same_as_folded DB VIEW_SQL FLAME_ARGS...: `spulse flame --folded
# FLAME_ARGS` lines equal VIEW_SQL's "stack count" lines (as sorted sets).
same_as_folded() {
	local db=$1 sql=$2
	shift 2
	"$SP" flame --folded "$@" 2>flame.err | LC_ALL=C sort >want.folded ||
		die "flame $* failed" || return 1
	q "$db" "$sql" | LC_ALL=C sort >got.folded ||
		die "query failed: $sql" || return 1
	[ -s want.folded ] || die "flame --folded printed nothing" || return 1
	cmp -s want.folded got.folded || {
		diff want.folded got.folded | head -n 10
		die "folded stacks differ ($(wc -l <want.folded) lines wanted, $(wc -l <got.folded) got)"
	}
}

# rec_spool: rec.spulse, a kernel-only spool with recursion (kallsyms
# sidecar): 5 samples main->rec->rec->rec->leaf, 3 samples
# main->rec->rec->rec (two different addresses inside rec), 2 samples
# main->leaf->rec->leaf.
rec_spool() {
	cat >rec.txt <<'EOT'
# header start_us=2000000 interval_us=1000
thread id=0 pid=10 tid=10 comm=rec
thread id=1 pid=10 tid=11 comm=worker
frame id=0 kind=kernel addr=0xffffffff81000110
frame id=1 kind=kernel addr=0xffffffff81000210
frame id=2 kind=kernel addr=0xffffffff81000220
frame id=3 kind=kernel addr=0xffffffff81000310
stack id=0 parent=root frame=0
stack id=1 parent=0 frame=1
stack id=2 parent=1 frame=2
stack id=3 parent=2 frame=1
stack id=4 parent=3 frame=3
stack id=5 parent=0 frame=3
stack id=6 parent=5 frame=2
stack id=7 parent=6 frame=3
EOT
	local i
	for i in 1 2 3 4 5; do echo "sample dt_ns=1000 thread=0 stack=4"; done >>rec.txt
	for i in 1 2 3; do echo "sample dt_ns=1000 thread=1 stack=3"; done >>rec.txt
	for i in 1 2; do echo "sample dt_ns=1000 thread=1 stack=7"; done >>rec.txt
	"$SPOOLGEN" <rec.txt >rec.spulse || return 1
	printf 'ffffffff81000000 T _stext\nffffffff81000100 T main_fn\nffffffff81000200 T rec_fn\nffffffff81000300 T leaf_fn\nffffffff81000400 T end_fn\n' \
		>rec.spulse.kallsyms
	"$SP" check rec.spulse >/dev/null || die "rec.spulse invalid"
}

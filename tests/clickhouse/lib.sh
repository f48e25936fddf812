# Helpers for the clickhouse tests (sourced by run.sh). Each test runs in
# its own directory $WORK with $SP the spulse binary, $CH_URL the server
# and $DB a database of its own. A test fails by returning non-zero.

# die, expect_rc: the CLI suite's (tests/cli/lib.sh)
# shellcheck source=../cli/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../cli/lib.sh"

# chq SQL: run SQL in $DB, answer on stdout (TabSeparated).
chq() {
	ch_post "$CH_URL/?database=$DB" "$1"
}

# synth_hosts N SAMPLES: spools h1.spulse .. hN.spulse (seeds 1..N).
synth_hosts() {
	local i
	for i in $(seq 1 "$1"); do
		"$SP" synth -o "h$i.spulse" --samples "$2" --seed "$i" \
			--threads $((3 + i)) --kallsyms -q || return 1
	done
}

# push_hosts N [ARGS]: push hI.spulse as host hostI.
push_hosts() {
	local i n=$1
	shift
	for i in $(seq 1 "$n"); do
		"$SP" push --clickhouse "$CH_URL" --database "$DB" \
			--host "host$i" "$@" "h$i.spulse" >>push.out 2>>push.err ||
			{ cat push.err >&2; return 1; }
	done
}

# same FILE1 FILE2: equal, or show the first differences.
same() {
	cmp -s "$1" "$2" && return 0
	diff "$1" "$2" | head -n 20 >&2
	die "$1 and $2 differ"
}

# rows_of REPORT: the table without its title line (which names the source).
rows_of() {
	tail -n +2 "$1"
}


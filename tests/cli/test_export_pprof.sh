# export --format pprof read by the real client, `go tool pprof` (Debian
# golang-go): -raw totals equal the spool's samples, -top's flat counts
# equal spulse report's self counts function by function, sample types,
# period, mappings with build-ids, labels, the --pid filter. Uses
# build_known (test_report.sh) and synthetic spools.

# pprof ARGS...: go tool pprof without symbol or binary lookups
pprof() {
	PPROF_BINARY_PATH=/nonexistent PPROF_TMPDIR=$WORK HOME=${HOME:-$WORK} \
		GOCACHE=${GOCACHE:-$WORK/.gocache} \
		timeout 120 go tool pprof -symbolize=none "$@" 2>pprof.err
}

# raw_total FILE: the sum of the first value of every sample in -raw
raw_total() {
	pprof -raw "$1" | awk '/^Samples:/ {s = 1; next} /^Locations/ {s = 0}
		s && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+:$/ {t += $1} END {print t + 0}'
}

# top_rows FILE: "count name" of every function with flat > 0 in -top
top_rows() {
	pprof -top -nodecount=1000000 -nodefraction=0 -nodefraction=0 \
		-edgefraction=0 "$1" |
		awk '/^ *flat / {s = 1; next}
		     s && $1 > 0 {c = $1; $1 = $2 = $3 = $4 = $5 = ""; sub(/^ +/, ""); print c, $0}' |
		sort
}

# report_rows SPOOL [ARGS]: "self function" of every `spulse report --json`
# row with self > 0 (the display name, which is what pprof's function is)
report_rows() {
	local f=$1
	shift
	"$SP" report "$f" --top 0 --json "$@" 2>/dev/null | python3 -c '
import json, sys
for r in json.load(sys.stdin)["rows"]:
    if r["self"] > 0:
        print(r["self"], r["function"])' | sort
}

if command -v go >/dev/null; then

test_pprof_raw_total_equals_spool_samples() {
	local want got
	build_known || return 1
	expect_rc 0 "$SP" export known.spulse --format pprof -o k.pb.gz || return 1
	gzip -t k.pb.gz || die "not gzip" || return 1
	got=$(raw_total k.pb.gz)
	[ "$got" -eq 16 ] || die "pprof -raw total $got, wanted 16 ($(cat pprof.err))" ||
		return 1
	"$SP" synth -q -o s.spulse --samples 30000 --threads 10 --kallsyms || return 1
	want=$(json_field samples "$("$SP" check --json s.spulse)")
	expect_rc 0 "$SP" export s.spulse --format pprof -o s.pb.gz || return 1
	got=$(raw_total s.pb.gz)
	[ "$got" -eq "$want" ] || die "synth: pprof total $got, spool $want"
}

test_pprof_top_functions_equal_report() {
	build_known || return 1
	expect_rc 0 "$SP" export known.spulse --format pprof -o k.pb.gz || return 1
	top_rows k.pb.gz >got || return 1
	report_rows known.spulse >want
	grep -qx '7 known_alpha_leaf' want || die "report: $(cat want)" || return 1
	diff want got || die "pprof -top differs from spulse report" || return 1
	"$SP" synth -q -o s.spulse --samples 20000 --kallsyms || return 1
	expect_rc 0 "$SP" export s.spulse --format pprof -o s.pb.gz || return 1
	top_rows s.pb.gz >got || return 1
	report_rows s.spulse >want
	[ "$(wc -l <want)" -gt 100 ] || die "synth report too small" || return 1
	diff want got >d || die "synth: $(head d)"
}

test_pprof_sample_types_period_and_time() {
	build_known || return 1
	expect_rc 0 "$SP" export known.spulse --format pprof -o k.pb.gz || return 1
	pprof -raw k.pb.gz >raw || die "$(cat pprof.err)" || return 1
	grep -qx 'PeriodType: cpu nanoseconds' raw || die "period type" || return 1
	grep -qx 'Period: 1000000' raw || die "period (interval_us 1000)" || return 1
	# samples/count first (and the default), then cpu/nanoseconds
	grep -qx 'samples/count\[dflt\] cpu/nanoseconds' raw ||
		die "sample types: $(grep -A1 '^Samples' raw)" || return 1
	# 7 samples of alpha = 7 ms
	grep -Eq '^ +7 +7000000: ' raw || die "values [7, 7000000] missing" ||
		return 1
	# -sample_index=cpu: the same ranking in ns
	pprof -top -sample_index=cpu k.pb.gz >top || return 1
	grep -q 'Total samples = 16ms' top || die "cpu total: $(grep Total top)"
}

test_pprof_mappings_build_ids_lines_and_labels() {
	local bid want
	build_known || return 1
	bid=$(readelf -nW known | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
	[ -n "$bid" ] || die "the test ELF has no build-id" || return 1
	sed -i "s|^\(module id=0 .*\)build_id=\$|\1build_id=$bid|" known.txt
	"$SPOOLGEN" <known.txt >known.spulse || return 1
	expect_rc 0 "$SP" export known.spulse --format pprof -o k.pb.gz || return 1
	pprof -raw k.pb.gz >raw || return 1
	sed -n '/^Mappings/,$p' raw >maps
	grep -q "^1: 0x7f0000000000/0x7f00000[0-9a-f]*/0x[0-9a-f]* $WORK/known $bid" maps ||
		die "known mapping: $(cat maps)" || return 1
	grep -q ' /nonexistent/libgone.so ' maps || die "libgone mapping" || return 1
	grep -q '\[kernel.kallsyms\]' maps || die "no kernel mapping" || return 1
	# alpha's location: address = load address + (rel - file offset), its
	# line the one addr2line gives for known_alpha_leaf + 4
	want=$(addr2line -e known "$(printf '0x%x' $(( $(nm known |
		awk '$3 == "known_alpha_leaf" {print "0x" $1}') + 4 )))")
	grep -Eq ": 0x7f00000[0-9a-f]+ M=1 known_alpha_leaf ${want}( |\$)" raw ||
		die "alpha location, want line $want: $(grep -i alpha raw)" || return 1
	# labels: pid 200 has 6 samples via tagfocus
	pprof -raw -tagfocus=pid=200 k.pb.gz >raw200 || return 1
	grep -q 'pid:\[200\]' raw200 && ! grep -q 'pid:\[100\]' raw200 ||
		die "pid labels" || return 1
	grep -q 'comm:\[other\]' raw200 || die "comm label"
}

test_pprof_pid_filter() {
	local got
	build_known || return 1
	expect_rc 0 "$SP" export known.spulse --format pprof --pid 200 -o k.pb.gz ||
		return 1
	got=$(raw_total k.pb.gz)
	[ "$got" -eq 6 ] || die "--pid 200: total $got, wanted 6"
}

test_pprof_empty_and_corrupt_spools() {
	"$SP" synth -q -o s.spulse --samples 0 || return 1
	expect_rc 0 "$SP" export s.spulse --format pprof -o e.pb.gz || return 1
	[ "$(raw_total e.pb.gz)" -eq 0 ] || die "empty profile has samples" ||
		return 1
	"$SP" synth -q -o s.spulse --samples 500 || return 1
	head -c 3000 s.spulse >cut.spulse
	expect_rc 0 "$SP" export cut.spulse --format pprof -o c.pb.gz || return 1
	grep -q 'recovered from truncated tail' err || die "no recovery note" ||
		return 1
	raw_total c.pb.gz >/dev/null || return 1
	printf 'not a spool at all' >bad.spulse
	expect_rc 1 "$SP" export bad.spulse --format pprof -o b.pb.gz
}

else
	echo "note: pprof export tests not run (needs go: Debian golang-go)" >&2
fi

# The encoder itself, without Go: protoc-c --decode_raw parses the message
# (string_table[0] is the empty string, field numbers of profile.proto).
if command -v protoc-c >/dev/null; then
test_pprof_message_decodes_as_protobuf() {
	build_known || return 1
	expect_rc 0 "$SP" export known.spulse --format pprof -o k.pb.gz || return 1
	gzip -dc k.pb.gz >k.pb || return 1
	protoc-c --decode_raw <k.pb >dec || die "protoc-c cannot parse it" ||
		return 1
	# the first string_table entry (field 6) is ""
	[ "$(grep -m1 '^6: ' dec)" = '6: ""' ] || die "string_table[0]" ||
		return 1
	grep -q '^6: "known_alpha_leaf"' dec || die "no function name string" ||
		return 1
	# two sample_type entries (field 1), 6 distinct (thread, stack)
	# samples... 4 here (field 2), 6 locations (field 4)
	[ "$(grep -c '^1 {' dec)" -eq 2 ] || die "sample types" || return 1
	[ "$(grep -c '^2 {' dec)" -eq 4 ] || die "samples: $(grep -c '^2 {' dec)" ||
		return 1
	[ "$(grep -c '^4 {' dec)" -eq 6 ] || die "locations"
}
fi

if command -v go >/dev/null; then
test_pprof_inline_lines() {
	local inner outer
	export_build_inline || return 1
	read -r inner outer <<<"$INL_LINES"
	expect_rc 0 "$SP" export i.spulse --format pprof --inline -o i.pb.gz ||
		return 1
	pprof -raw i.pb.gz | sed -n '/^Locations/,/^Mappings/p' >loc || return 1
	# one location, two lines: inl_inner (innermost) then inl_outer
	grep -Eq "^ +1: 0x[0-9a-f]+ M=1 inl_inner $inner s=0$" loc &&
		grep -Eq "^ +inl_outer $outer s=0$" loc ||
		die "want $inner / $outer: $(cat loc)" || return 1
	pprof -top i.pb.gz >top || return 1
	grep -q ' inl_inner (inline)$' top || die "pprof -top: $(cat top)" ||
		return 1
	# without --inline: one line, the real function
	expect_rc 0 "$SP" export i.spulse --format pprof -o n.pb.gz || return 1
	pprof -raw n.pb.gz | sed -n '/^Locations/,/^Mappings/p' >loc || return 1
	grep -Eq "^ +1: 0x[0-9a-f]+ M=1 inl_outer " loc && ! grep -q inl_inner loc ||
		die "no --inline: $(cat loc)"
}
fi

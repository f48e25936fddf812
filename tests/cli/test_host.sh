# The host key (docs/FLEET.md "Identity"): --host filters and --sort host
# in report, flame, export and diff; "unknown" for spools without identity.

host_spools() {
	"$SP" synth -q -o web1.spulse --samples 3000 --seed 1 --cpus 2 \
		--off-cpu 20 || return 1
	"$SP" synth -q -o db1.spulse --samples 1500 --seed 3 || return 1
	"$SP" merge -q -o all.spulse web1.spulse db1.spulse
}

# report_total FILE ARGS: the "total" of report --json
report_total() {
	local f=$1
	shift
	json_field total "$("$SP" report --json "$@" "$f" 2>/dev/null)"
}

test_host_unknown_is_every_sample_of_a_spool_without_identity() {
	host_spools || return 1
	[ "$(report_total web1.spulse --host unknown)" = 3000 ] ||
		die "--host unknown" || return 1
	[ "$(report_total web1.spulse --host web1)" = 0 ] ||
		die "web1.spulse has no identity: its host is unknown" || return 1
	"$SP" report --sort host web1.spulse >rep 2>/dev/null || return 1
	grep -Eq '^ +100\.00% +3000 .* unknown$' rep || die "$(cat rep)"
}

test_host_filter_takes_a_comma_list_and_repeats() {
	host_spools || return 1
	[ "$(report_total all.spulse --host web1,db1)" = 4500 ] ||
		die "comma list" || return 1
	[ "$(report_total all.spulse --host web1 --host db1)" = 4500 ] ||
		die "repeated" || return 1
	[ "$(report_total all.spulse --host db1)" = 1500 ] || die "db1" ||
		return 1
	[ "$(report_total all.spulse --host nosuch)" = 0 ] || die "nosuch" ||
		return 1
	expect_rc 2 "$SP" report --host , all.spulse || return 1
	grep -q 'empty name' err || die "empty host name: $(cat err)"
}

test_host_filter_combines_with_comm_and_time() {
	local comm
	host_spools || return 1
	comm=$("$SP" report --sort comm --json db1.spulse 2>/dev/null |
		sed -n 's/.*"rows":\[{"comm":"\([^"]*\)".*/\1/p')
	[ -n "$comm" ] || die "no comm" || return 1
	[ "$(report_total db1.spulse --comm "$comm" --time 0.1,0.4)" = \
	  "$(report_total all.spulse --host db1 --comm "$comm" --time 0.1,0.4)" ] ||
		die "--host db1 --comm --time differs"
}

test_host_flame_folded_equals_the_input_flame() {
	host_spools || return 1
	"$SP" flame --folded web1.spulse >want 2>/dev/null || return 1
	"$SP" flame --folded --host web1 all.spulse >got 2>/dev/null || return 1
	[ -s want ] && cmp -s want got || die "flame --folded --host web1"
}

# (perf-script prints cpus: web1 has them on every sample; db1 has none,
# and a merge cannot say "unknown cpu" after web1's cpu records, FLEET.md)
test_host_export_folded_and_perf_script_equal_the_input() {
	local fmt h
	host_spools || return 1
	for fmt in folded perf-script; do
		for h in web1 db1; do
			[ $fmt = perf-script ] && [ $h = db1 ] && continue
			"$SP" export --format $fmt $h.spulse >want 2>/dev/null ||
				return 1
			"$SP" export --format $fmt --host $h all.spulse >got \
				2>/dev/null || return 1
			[ -s want ] && cmp -s want got ||
				die "export $fmt --host $h" || return 1
		done
	done
}

test_host_sort_key_combines_with_sym() {
	host_spools || return 1
	"$SP" report --sort host,sym --json --top 0 all.spulse >j 2>/dev/null ||
		return 1
	grep -q '"host":"web1"' j && grep -q '"host":"db1"' j ||
		die "rows lack the host key: $(head -c 300 j)" || return 1
	python3 - j <<'PY' || die "host,sym rows do not add up per host"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
per = {}
for r in rows:
    per[r["host"]] = per.get(r["host"], 0) + r["self"]
sys.exit(0 if per == {"web1": 3000, "db1": 1500} else 1)
PY
}

test_host_diff_sort_host_compares_hosts_of_two_merges() {
	host_spools || return 1
	"$SP" merge -q -o only-web1.spulse web1.spulse || return 1
	"$SP" diff --sort host --json only-web1.spulse all.spulse >j \
		2>/dev/null || return 1
	grep -q '"host":"db1","self_a":0,"self_b":1500' j ||
		die "diff --sort host: $(head -c 400 j)"
}

# synth --host NAME writes an identity: its host is NAME (not "unknown",
# not the file name after a merge), deterministically.
test_host_synth_host_writes_an_identity() {
	"$SP" synth -q -o a.spulse --samples 500 --seed 4 --host edge-3 || return 1
	"$SP" synth -q -o b.spulse --samples 500 --seed 4 --host edge-3 || return 1
	cmp -s a.spulse b.spulse || die "not deterministic" || return 1
	[ "$(report_total a.spulse --host edge-3)" = 500 ] || die "host" ||
		return 1
	[ "$(report_total a.spulse --host unknown)" = 0 ] || die "unknown" ||
		return 1
	"$SP" merge -q -o m.spulse a.spulse || return 1
	[ "$(report_total m.spulse --host edge-3)" = 500 ] ||
		die "merge renamed the host" || return 1
	expect_rc 2 "$SP" synth -q -o c.spulse --host ''
}

# flame --root host: one tower per host of a merged spool, each tower the
# host's own flame graph (its folded lines prefixed with the host name)
test_host_flame_root_host_is_a_tower_per_host() {
	local h
	host_spools || return 1
	"$SP" flame --folded --root host all.spulse >got 2>/dev/null || return 1
	: >want
	for h in web1 db1; do
		"$SP" flame --folded $h.spulse 2>/dev/null | sed "s/^/$h;/" >>want ||
			return 1
	done
	sort want >want.s
	sort got >got.s
	[ -s want.s ] && cmp -s want.s got.s ||
		die "flame --root host: $(diff want.s got.s | head -5)" || return 1
	expect_rc 2 "$SP" flame --root nosuch all.spulse || return 1
	grep -q 'comm, pid, tid or host' err || die "usage: $(cat err)"
}

# export --format json: every thread carries its host
test_host_export_json_threads_carry_their_host() {
	host_spools || return 1
	"$SP" export --format json -o j.json all.spulse 2>/dev/null || return 1
	python3 - <<'PY' || die "json hosts"
import json
j = json.load(open("j.json"))
hosts = {t["host"] for t in j["threads"]}
assert hosts == {"web1", "db1"}, hosts
n = {}
for s in j["samples"]:
    h = j["threads"][s["thread"]]["host"]
    n[h] = n.get(h, 0) + 1
assert n == {"web1": 3000, "db1": 1500}, n
PY
}

# report --sort srcline: file:line of each frame (the symbolizer's DWARF
# lines) checked against binutils' addr2line on build_known's ELF.

test_report_sort_srcline_matches_addr2line() {
	local f a line
	build_known || return 1
	expect_rc 0 "$SP" report known.spulse --sort srcline --json --top 0 ||
		return 1
	: >want
	for f in known_alpha_leaf known_beta_mid known_gamma_root; do
		# the spool's frames are at symbol + 4
		a=$(nm known | awk -v s="$f" '$3 == s {print $1}')
		line=$(addr2line -e known "$(printf '0x%x' $((0x$a + 4)))")
		case $line in *'?'*) die "addr2line has no line for $f" || return 1 ;; esac
		echo "$line" >>want
	done
	# alpha 7/7, beta 3/14, gamma 0/14; kernel + missing module: ??:0
	python3 - <<'PY' || die "srcline rows: $(cat out)"
import json
rows = {r["srcline"]: (r["self"], r["total"]) for r in json.load(open("out"))["rows"]}
want = [l.strip() for l in open("want")]
assert rows.get(want[0]) == (7, 7), (want[0], rows)
assert rows.get(want[1]) == (3, 14), (want[1], rows)
assert rows.get(want[2]) == (0, 14), (want[2], rows)
assert rows.get("??:0") == (6, 6), rows
assert len(rows) == 4, rows
PY
}

test_report_sort_srcline_with_sym_splits_rows() {
	build_known || return 1
	expect_rc 0 "$SP" report known.spulse --sort srcline,sym --top 0 || return 1
	head -n 1 out | grep -q '6 rows by srcline,sym' || die "$(head -n 1 out)" ||
		return 1
	grep -q 'known\.c:[0-9][0-9]*  *known_alpha_leaf \[' out ||
		die "no file:line column before the function"
}

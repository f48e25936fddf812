# spulse diff and flame --diff: two spools from build_known's text, the
# second with known_alpha_leaf's samples doubled (7 -> 14 of 23), checked
# against the two profiles' own report --json / flame --folded output.

build_pair() {
	build_known || return 1
	sed 's/^sample dt_ns=1000 thread=0 stack=2$/&\n&/' known.txt >after.txt
	"$SPOOLGEN" <after.txt >after.spulse || return 1
	cp known.spulse.kallsyms after.spulse.kallsyms
}

test_diff_rows_match_two_reports() {
	build_pair || return 1
	"$SP" report known.spulse --json --top 0 >a.json 2>/dev/null || return 1
	"$SP" report after.spulse --json --top 0 >b.json 2>/dev/null || return 1
	expect_rc 0 "$SP" diff known.spulse after.spulse --json --top 0 || return 1
	python3 - <<'PY' || die "diff JSON disagrees with the reports"
import json
a, b, d = (json.load(open(f)) for f in ("a.json", "b.json", "out"))
assert d["unit"] == "samples" and d["total_a"] == a["total"] == 16 and d["total_b"] == b["total"] == 23
ra = {(r["function"], r["module"]): r for r in a["rows"]}
rb = {(r["function"], r["module"]): r for r in b["rows"]}
keys = set(ra) | set(rb)
assert len(d["rows"]) == len(keys), (len(d["rows"]), len(keys))
z = {"self": 0, "total": 0}
for r in d["rows"]:
    k = (r["function"], r["module"])
    x, y = ra.get(k, z), rb.get(k, z)
    assert (r["self_a"], r["self_b"], r["total_a"], r["total_b"]) == (x["self"], y["self"], x["total"], y["total"]), r
    ds = 100.0 * y["self"] / 23 - 100.0 * x["self"] / 16
    dt = 100.0 * y["total"] / 23 - 100.0 * x["total"] / 16
    assert abs(r["delta_self_pct"] - ds) < 1e-3 and abs(r["delta_total_pct"] - dt) < 1e-3, r
    assert abs(r["self_pct_a"] - 100.0 * x["self"] / 16) < 1e-3
# sorted by |delta self|, largest first
v = [abs(r["delta_self_pct"]) for r in d["rows"]]
assert v == sorted(v, reverse=True), v
assert d["rows"][0]["function"] == "known_alpha_leaf" and d["rows"][0]["self_b"] == 14
PY
}

test_diff_table_top_and_by_total() {
	build_pair || return 1
	expect_rc 0 "$SP" diff known.spulse after.spulse --top 2 || return 1
	head -n 1 out | grep -q '^# known.spulse (16 samples) -> after.spulse (23 samples): 6 rows, sorted by |delta self%|$' ||
		die "header: $(head -n 1 out)" || return 1
	[ "$(awk 'NR > 2' out | wc -l)" -eq 2 ] || die "--top 2" || return 1
	sed -n 3p out | grep -q '^ +17.12%   43.75%   60.87%  +17.12%   43.75%   60.87%          7         14          7         14  known_alpha_leaf \[' ||
		die "alpha row: $(sed -n 3p out)" || return 1
	sed -n 4p out | grep -q '^  -7.61%.*known_kernel_fn \[kernel.kallsyms\]$' ||
		die "kernel row: $(sed -n 4p out)" || return 1
	# by total: alpha (+17.12) first, then beta/gamma (+3.80 each) and
	# kernel (-7.61) in |delta| order
	expect_rc 0 "$SP" diff known.spulse after.spulse --by total --json --top 0 ||
		return 1
	python3 -c 'import json
v = [abs(r["delta_total_pct"]) for r in json.load(open("out"))["rows"]]
assert v == sorted(v, reverse=True), v' || die "--by total order"
}

test_diff_same_spool_is_all_zero() {
	build_known || return 1
	expect_rc 0 "$SP" diff known.spulse known.spulse --json --top 0 || return 1
	python3 -c 'import json
d = json.load(open("out"))
assert d["rows"] and all(r["delta_self_pct"] == 0 and r["delta_total_pct"] == 0 for r in d["rows"])' ||
		die "self-diff not zero" || return 1
	expect_rc 0 "$SP" diff known.spulse known.spulse --percent-limit 0.01 || return 1
	[ "$(awk 'NR > 2' out | wc -l)" -eq 0 ] || die "--percent-limit kept 0 rows"
}

test_diff_applies_filters_to_both() {
	build_pair || return 1
	expect_rc 0 "$SP" diff known.spulse after.spulse --pid 200 --json || return 1
	python3 -c 'import json
d = json.load(open("out"))
assert d["total_a"] == 6 and d["total_b"] == 6, d
assert all(r["delta_self_pct"] == 0 for r in d["rows"])' || die "pid 200 unchanged"
}

test_flame_diff_folded_is_difffolded_of_both() {
	build_pair || return 1
	"$SP" flame --folded known.spulse 2>/dev/null | sort >a.f || return 1
	"$SP" flame --folded after.spulse 2>/dev/null | sort >b.f || return 1
	expect_rc 0 "$SP" flame --diff --folded known.spulse after.spulse || return 1
	# "stack A B" for the union of stacks (0 where absent), as difffolded
	python3 - <<'PY' || die "diff folded lines" || return 1
def load(f):
    out = {}
    for l in open(f):
        s, n = l.rstrip("\n").rsplit(" ", 1)
        out[s] = int(n)
    return out
a, b = load("a.f"), load("b.f")
want = sorted("%s %d %d" % (s, a.get(s, 0), b.get(s, 0)) for s in set(a) | set(b))
got = sorted(l.rstrip("\n") for l in open("out"))
assert got == want, (got, want)
PY
	grep -q '^known_gamma_root;known_beta_mid;known_alpha_leaf 7 14$' out ||
		die "alpha line"
}

test_flame_diff_svg_red_grew_blue_shrank() {
	build_pair || return 1
	expect_rc 0 "$SP" flame --diff known.spulse after.spulse -o d.svg || return 1
	python3 - <<'PY' || return 1
import re, xml.etree.ElementTree as ET
ET.parse("d.svg")
svg = open("d.svg").read()
box = {}
for t, r in re.findall(r"<title>(.*?)</title><rect ([^>]*)/>", svg):
    name = t.split(" (")[0]
    rgb = tuple(int(x) for x in re.search(r"rgb\((\d+),(\d+),(\d+)\)", r).groups())
    w = int(re.search(r'sp:w="(\d+)"', r).group(1))
    box[name] = (rgb, w, t)
# widths are the second profile's
assert box["all"][1] == 23 and box["known_alpha_leaf"][1] == 14, box
# alpha grew the most: full red; the kernel frame shrank: blue
assert box["known_alpha_leaf"][0] == (255, 60, 60), box["known_alpha_leaf"]
k = box["known_kernel_fn"][0]
assert k[2] == 255 and k[0] == k[1] < 250, k
assert box["all"][0] == (250, 250, 250), box["all"]
assert "before 7 samples, 43.75%; +17.12%" in box["known_alpha_leaf"][2], box["known_alpha_leaf"][2]
assert "known.spulse -&gt; after.spulse" in svg
PY
}

test_diff_sort_keys_match_rows_by_thread() {
	build_pair || return 1
	# by comm: known 10 -> 17 of 23, other 6 -> 6
	expect_rc 0 "$SP" diff known.spulse after.spulse --sort comm --json || return 1
	python3 - <<'PY' || die "diff --sort comm: $(cat out)"
import json
rows = {r["comm"]: r for r in json.load(open("out"))["rows"]}
assert set(rows) == {"known", "other"}, rows
k, o = rows["known"], rows["other"]
assert (k["self_a"], k["self_b"], o["self_a"], o["self_b"]) == (10, 17, 6, 6)
assert abs(k["delta_self_pct"] - (100 * 17 / 23 - 100 * 10 / 16)) < 1e-3
assert "function" not in k and "module" not in k
PY
	expect_rc 0 "$SP" diff known.spulse after.spulse --sort comm || return 1
	sed -n 3p out | grep -q '  known$' || die "table key column: $(cat out)"
}

# The same binary at two paths (a copy, or one built in two trees): with the
# default sym key one row per function (by module file name, or by
# build-id when the names differ); --sort dso,sym keeps the paths apart.
test_diff_sort_sym_matches_functions_across_module_paths() {
	local bid
	build_pair || return 1
	mkdir -p b
	cp known b/known
	sed "s|path=$WORK/known |path=$WORK/b/known |" after.txt >b.txt
	grep -q "path=$WORK/b/known " b.txt || die "no path to change" || return 1
	"$SPOOLGEN" <b.txt >b.spulse || return 1
	cp known.spulse.kallsyms b.spulse.kallsyms
	expect_rc 0 "$SP" diff known.spulse b.spulse --top 0 || return 1
	[ "$(grep -c ' known_alpha_leaf ' out)" = 1 ] ||
		die "alpha rows: $(cat out)" || return 1
	grep ' known_alpha_leaf ' out | grep -q '^ *+17' ||
		die "alpha did not grow: $(cat out)" || return 1
	expect_rc 0 "$SP" diff known.spulse b.spulse --sort sym --json || return 1
	python3 - <<'PY' || die "JSON rows: $(cat out)" || return 1
import json
rows = [r for r in json.load(open("out"))["rows"] if r["function"] == "known_alpha_leaf"]
assert len(rows) == 1, rows
r = rows[0]
assert (r["self_a"], r["self_b"]) == (7, 14), r
PY
	expect_rc 0 "$SP" diff known.spulse b.spulse --sort dso,sym --top 0 ||
		return 1
	[ "$(grep -c ' known_alpha_leaf' out)" = 2 ] ||
		die "--sort dso,sym merged the paths: $(cat out)" || return 1
	# another file name, the same build-id: one row
	bid=$(readelf -n known | awk '/Build ID:/ {print $3}')
	[ -n "$bid" ] || { echo "no build-id in known: skipped" >&2; return 0; }
	cp known b/renamed
	sed "s|path=$WORK/known build_id=|path=$WORK/known build_id=$bid|" known.txt >a2.txt
	sed "s|path=$WORK/known build_id=|path=$WORK/b/renamed build_id=$bid|" after.txt >b2.txt
	"$SPOOLGEN" <a2.txt >a2.spulse && "$SPOOLGEN" <b2.txt >b2.spulse || return 1
	expect_rc 0 "$SP" diff a2.spulse b2.spulse --top 0 || return 1
	[ "$(grep -c ' known_alpha_leaf ' out)" = 1 ] ||
		die "build-id rows: $(cat out)"
}

# flame: the interactive SVG (valid XML, its script run in headless
# Chromium: search with match %, zoom, reset), palettes and legend,
# --inverted, --root, filters; on build_known's spool (test_report.sh).

# svg_dom SVG QUERY: the DOM after the embedded script ran with the URL
# parameters QUERY (chromium --headless --dump-dom), into dom.
svg_dom() {
	timeout 60 chromium --headless --no-sandbox --disable-gpu \
		--user-data-dir="$WORK/chromium" --dump-dom \
		"file://$WORK/$1?$2" >dom 2>chromium.err
	grep -q 'sp:ready="1"' dom ||
		die "script did not finish: $(head -c 300 dom) $(tail -n 3 chromium.err)"
}

# rect_attr NAME ATTR: ATTR of the rect of the box titled "NAME (..." in dom.
rect_attr() {
	python3 - "$1" "$2" <<'PY'
import re, sys
name, attr = sys.argv[1], sys.argv[2]
dom = open("dom").read()
for g in re.findall(r"<g[^>]*>.*?</g>", dom, re.S):
    t = re.search(r"<title>(.*?)</title>", g, re.S)
    if t and t.group(1).startswith(name + " ("):
        r = re.search(r"<rect ([^>]*)>", g).group(1)
        m = re.search(attr + r'="([^"]*)"', r)
        cls = re.search(r'<g class="([^"]*)"', g)
        print(m.group(1) if m else "", cls.group(1) if cls else "-")
        break
PY
}

test_flame_svg_is_valid_xml_with_odd_names() {
	build_known || return 1
	printf 'ffffffff81000000 T _stext\nffffffff81000100 T std::vector<int>::push&"x"\n' \
		>known.spulse.kallsyms
	expect_rc 0 "$SP" flame known.spulse -o f.svg --title 'a <b> & "c"' ||
		return 1
	python3 - <<'PY' || die "not valid XML / names not kept" || return 1
import xml.etree.ElementTree as ET
ns = {"s": "http://www.w3.org/2000/svg"}
root = ET.parse("f.svg").getroot()
titles = [t.text for t in root.iter("{http://www.w3.org/2000/svg}title")]
assert 'std::vector<int>::push&"x" (4 samples, 25.00%)' in titles, titles
texts = "".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
assert 'a <b> & "c" (16 samples)' in texts, texts
scripts = list(root.iter("{http://www.w3.org/2000/svg}script"))
assert len(scripts) == 1 and "function zoom" in scripts[0].text
frames = root.find(".//s:g[@id='frames']", ns)
assert len(frames) == 7, len(frames)   # all + 6 distinct frames
PY
	if command -v node >/dev/null; then
		python3 -c 'import xml.etree.ElementTree as E
print(next(E.parse("f.svg").getroot().iter("{http://www.w3.org/2000/svg}script")).text)' >s.js
		node --check s.js || die "node cannot parse the script"
	fi
}

# The search highlight cannot be mistaken for a frame colour (issue 26:
# FlameGraph's magenta was close to the violet waker palette): in a
# --wakers graph of 300 distinct waker, blocked and kernel frames (their
# colours spread over each palette by name), the fill the script gives a
# match is at least 150 (RGB distance) from every box's fill. The old
# rgb(230,0,230) came within ~120 of the waker boxes.
test_flame_search_colour_far_from_every_palette() {
	python3 - >w.txt <<'PY'
print('header start_us=1000000 interval_us=1000')
n = 100
for i in range(n):
    print('frame id=%d kind=user addr=%d' % (i, 0x1000 + 16 * i))
for i in range(n):
    print('frame id=%d kind=kernel addr=%d' % (n + i, 0xffffffff81000000 + 16 * i))
for i in range(n):
    print('stack id=%d parent=root frame=%d' % (2 * i, i))
    print('stack id=%d parent=%d frame=%d' % (2 * i + 1, 2 * i, n + i))
print('thread id=0 pid=1 tid=1 comm=a')
print('thread id=1 pid=1 tid=2 comm=b')
for i in range(n):
    print('offcpu t=%d thread=0 stack=%d state=S cpu_out=0 cpu_in=0 '
          'blocked_ns=1000000 runq_ns=0 waker=1 waker_stack=%d waker_cpu=0'
          % (10 + i, 2 * i + 1, 2 * ((i + 37) % n) + 1))
PY
	"$SPOOLGEN" <w.txt >w.spulse || return 1
	expect_rc 0 "$SP" flame --wakers w.spulse -o w.svg || return 1
	python3 - <<'PY'
import math, re, sys
svg = open("w.svg").read()
m = re.search(r"if \(re\.test\(f\.name\)\) \{\s*f\.r\.setAttribute\('fill', 'rgb\((\d+),(\d+),(\d+)\)'\)", svg)
if not m:
    sys.exit("no search fill in the script")
hit = tuple(int(x) for x in m.groups())
fills = set()
for r in re.findall(r"<g><title>.*?</title><rect ([^>]*)/>", svg):
    fills.add(tuple(int(x) for x in re.search(r"rgb\((\d+),(\d+),(\d+)\)", r).groups()))
if len(fills) < 100:
    sys.exit("only %d distinct box colours" % len(fills))
d, near = min((math.dist(hit, f), f) for f in fills)
print("search fill %r: nearest box colour %r at %.1f" % (hit, near, d))
if d < 150:
    sys.exit("search fill %r is %.1f from box colour %r" % (hit, d, near))
PY
}

test_flame_palettes_distinct_with_legend() {
	build_known || return 1
	expect_rc 0 "$SP" flame known.spulse -o f.svg || return 1
	python3 - <<'PY' || return 1
import re
svg = open("f.svg").read()
box = {}
for t, r in re.findall(r"<title>([^ ]*) \(.*?</title><rect ([^>]*)/>", svg):
    box[t] = tuple(int(x) for x in re.search(r"rgb\((\d+),(\d+),(\d+)\)", r).groups())
k = box["known_kernel_fn"]
assert k[1] > k[0] > k[2], ("kernel not green", k)
for u in ("known_alpha_leaf", "known_beta_mid", "known_gamma_root"):
    c = box[u]
    assert c[0] >= 205 and c[0] > c[1] > c[2], ("user not warm", u, c)
assert box["[truncated]"] == (170, 170, 170), box["[truncated]"]
legend = re.search(r'<g id="legend">(.*?)</g>', svg).group(1)
names = re.findall(r"<text[^>]*>([^<]*)</text>", legend)
assert names == ["user", "kernel", "[truncated]"], names
PY
	expect_rc 0 "$SP" flame known.spulse --kernel -o k.svg || return 1
	grep -q '<g id="legend">.*>kernel<' k.svg || die "kernel legend" || return 1
	! grep -q '<g id="legend">.*>user<' k.svg ||
		die "legend lists a palette not drawn"
}

test_flame_inverted_puts_root_on_top() {
	build_known || return 1
	expect_rc 0 "$SP" flame known.spulse -o up.svg || return 1
	expect_rc 0 "$SP" flame known.spulse --inverted -o down.svg || return 1
	python3 - <<'PY' || return 1
import re
for f, top in (("up.svg", False), ("down.svg", True)):
    ys = {}
    for t, y in re.findall(r"<title>([^ ]*) \(.*?</title><rect [^>]*y=\"(\d+)\"", open(f).read()):
        ys[t] = int(y)
    order = [ys["all"], ys["known_gamma_root"], ys["known_beta_mid"], ys["known_alpha_leaf"]]
    want = sorted(order) if top else sorted(order, reverse=True)
    assert order == want, (f, order)
    assert order[1] - order[0] == (16 if top else -16), (f, order)
PY
}

test_flame_root_frames_per_comm_pid_tid() {
	build_known || return 1
	expect_rc 0 "$SP" flame known.spulse --root tid --folded || return 1
	sort out >got
	cat >want <<'EOT'
known 100/100;known_gamma_root;known_beta_mid 3
known 100/100;known_gamma_root;known_beta_mid;known_alpha_leaf 7
other 200/201;[truncated];0x1234 [/nonexistent/libgone.so] 2
other 200/201;known_gamma_root;known_beta_mid;known_kernel_fn 4
EOT
	diff want got || die "--root tid" || return 1
	expect_rc 0 "$SP" flame known.spulse --root comm --folded || return 1
	[ "$(grep -c '^known;' out)" -eq 2 ] && [ "$(grep -c '^other;' out)" -eq 2 ] ||
		die "--root comm: $(cat out)" || return 1
	expect_rc 0 "$SP" flame known.spulse --root pid -o r.svg || return 1
	grep -q '<title>known 100 (10 samples, 62.50%)</title><rect [^>]*fill="rgb(2[0-9][0-9],' r.svg ||
		die "no khaki pid box" || return 1
	grep -q '<g id="legend">.*comm/pid/tid' r.svg || die "legend lacks roots"
}

test_flame_filters_match_report_totals() {
	local args total sum
	gen_model || return 1
	for args in "--tid 101" "--comm worker --user" "--dso libc.so.6" \
		"--time 0.3,1.1 --kernel" "--pid 100,300"; do
		# shellcheck disable=SC2086
		expect_rc 0 "$SP" report model.spulse --json $args || return 1
		total=$(json_field total "$(cat out)")
		# shellcheck disable=SC2086
		expect_rc 0 "$SP" flame model.spulse --folded $args || return 1
		sum=$(awk '{s += $NF} END {print s + 0}' out)
		[ "$sum" -eq "$total" ] || die "$args: folded $sum, report $total" ||
			return 1
	done
	# --kernel: no folded frame is a module or user frame
	expect_rc 0 "$SP" flame model.spulse --folded --kernel || return 1
	! grep -q '0x' out || die "non-kernel frame with --kernel"
}

# The script run in a real browser: only when chromium (Debian package) is
# installed; otherwise the tests are not defined and run.sh says so.
if command -v chromium >/dev/null; then

test_flame_svg_search_reports_match_percent() {
	build_known || return 1
	expect_rc 0 "$SP" flame known.spulse -o f.svg || return 1
	svg_dom f.svg 's=alpha' || return 1
	grep -q '>Matched: 43.75%<' dom || die "match % (7/16)" || return 1
	[ "$(rect_attr known_alpha_leaf fill)" = "rgb(16,16,16) -" ] ||
		die "alpha not highlighted: $(rect_attr known_alpha_leaf fill)" ||
		return 1
	[ "$(rect_attr known_beta_mid fill | cut -d' ' -f1)" != "rgb(16,16,16)" ] ||
		die "beta highlighted" || return 1
	# the match's text is white on the dark fill
	grep -q '<text[^>]*class="hit"[^>]*>known_alpha_leaf' dom ||
		die "alpha's text not class hit" || return 1
	grep -q '>Reset Search<' dom || die "no Reset Search" || return 1
	# nested matches count once: beta (14) contains alpha (7) and kfn (4)
	svg_dom f.svg 's=known_(alpha|beta)' || return 1
	grep -q '>Matched: 87.50%<' dom || die "nested match counted twice" ||
		return 1
	svg_dom f.svg 's=%5C%5Btruncated' || return 1
	grep -q '>Matched: 12.50%<' dom || die "URL-escaped search"
}

test_flame_svg_click_zoom_rescales() {
	build_known || return 1
	expect_rc 0 "$SP" flame known.spulse -o f.svg || return 1
	svg_dom f.svg 'z=known_beta_mid' || return 1
	# beta (14 samples) fills the width: alpha 7/14, the kernel frame 4/14
	[ "$(rect_attr known_beta_mid width)" = "1180.0 -" ] ||
		die "beta width $(rect_attr known_beta_mid width)" || return 1
	[ "$(rect_attr known_alpha_leaf width)" = "590.0 -" ] ||
		die "alpha width $(rect_attr known_alpha_leaf width)" || return 1
	[ "$(rect_attr known_kernel_fn width)" = "337.1 -" ] ||
		die "kernel width $(rect_attr known_kernel_fn width)" || return 1
	# callers full width and faded, other towers hidden
	[ "$(rect_attr known_gamma_root width)" = "1180.0 parent" ] ||
		die "gamma: $(rect_attr known_gamma_root width)" || return 1
	[ "$(rect_attr all width)" = "1180.0 parent" ] || die "root" || return 1
	[ "$(rect_attr '[truncated]' width | cut -d' ' -f2)" = hide ] ||
		die "truncated tower not hidden" || return 1
	grep -q 'id="unzoom" class="btn"' dom || die "Reset Zoom not shown" ||
		return 1
	# zoomed labels are refitted: alpha is wide enough for its name now
	grep -q '>known_alpha_leaf</text>' dom || die "label not refitted"
}

test_flame_svg_reset_zoom_and_details_line() {
	build_known || return 1
	expect_rc 0 "$SP" flame known.spulse -o f.svg || return 1
	# zoom then reset: widths back to value / 16 * 1180 px, nothing hidden
	svg_dom f.svg 'z=known_beta_mid&u=1' || return 1
	set -- $(rect_attr known_alpha_leaf width) $(rect_attr '[truncated]' width)
	python3 -c "import sys
a, b = float(sys.argv[1]), float(sys.argv[3])
assert abs(a - 7 / 16 * 1180) < 0.06 and abs(b - 2 / 16 * 1180) < 0.06, (a, b)
assert sys.argv[2] == sys.argv[4] == '-', sys.argv" "$@" ||
		die "after reset: $*" || return 1
	grep -q 'id="unzoom" class="btn hide"' dom || die "Reset Zoom still shown" ||
		return 1
	# hovering a box fills the details line with its title
	svg_dom f.svg 'h=known_kernel_fn' || return 1
	grep -q '<text id="details"[^>]*>Function: known_kernel_fn (4 samples, 25.00%)</text>' dom ||
		die "details line: $(grep -o '<text id="details"[^<]*' dom)"
}

else
	echo "note: flame SVG script tests not run in a browser (needs chromium; node --check still parses the script)" >&2
fi

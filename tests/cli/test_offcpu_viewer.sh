# A real trace-event client: speedscope (npm package, its browser build)
# in headless Chromium imports `spulse export --format trace-event` and
# lists one profile per thread with the summed slice durations.
#
# Needs chromium (Debian package) and the unpacked speedscope npm package:
# `make BUILD=... cli-speedscope` (npm pack speedscope@1.25.0 into
# $BUILD/tests/cli/speedscope/package) or SPEEDSCOPE_DIR=... . Without
# them the test is not defined and run.sh says so.

SPEEDSCOPE_DIR=${SPEEDSCOPE_DIR:-$BUILD/tests/cli/speedscope/package}

# speedscope_threads TRACE.json: "name|duration" per profile speedscope made
speedscope_threads() {
	local js=$WORK/profile.js
	printf 'speedscope.loadFileFromBase64("%s", "%s")\n' "$(basename "$1")" \
		"$(base64 -w0 "$1")" >"$js"
	timeout 90 chromium --headless --no-sandbox --disable-gpu \
		--user-data-dir="$WORK/chromium" --virtual-time-budget=5000 \
		--dump-dom "file://$SPEEDSCOPE_DIR/dist/release/index.html#localProfilePath=$js" \
		2>/dev/null >dom.html || return 1
	python3 - <<'PY'
import re
d = open("dom.html").read()
title = re.search(r"<title>(.*?)</title>", d).group(1)
print("title|" + title)
for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", d, re.S):
    cells = [re.sub("<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)]
    if len(cells) == 3 and cells[0].isdigit():
        print(cells[1] + "|" + cells[2])
PY
}

if command -v chromium >/dev/null &&
	[ -f "$SPEEDSCOPE_DIR/dist/release/index.html" ]; then
test_trace_event_speedscope_imports() {
	build_offcpu || return 1
	expect_rc 0 "$SP" export off.spulse --format trace-event -o t.json || return 1
	speedscope_threads t.json >got || die "chromium failed" || return 1
	cat >want <<'EOT'
title|t.json - speedscope
known (pid 100), known (tid 100)|75.10ms
known (pid 100), worker (tid 101)|12.00ms
other (pid 200), other (tid 201)|4.00ms
EOT
	diff want got || die "speedscope's view differs" || return 1
	# running slices add 8.9 + 37 ms (+ 128.5 ms for worker between I3 and I6)
	expect_rc 0 "$SP" export off.spulse --format trace-event --running -o r.json ||
		return 1
	speedscope_threads r.json >got || return 1
	grep -qx 'known (pid 100), known (tid 100)|121.00ms' got &&
		grep -qx 'known (pid 100), worker (tid 101)|41.50ms' got ||
		die "with --running: $(cat got)"
}
else
	echo "note: trace-event viewer test not run (needs chromium and $SPEEDSCOPE_DIR; make cli-speedscope)" >&2
fi

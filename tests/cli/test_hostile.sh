# Hostile but valid spools (issue 25): every byte value 0..255 in comms,
# module paths, identity strings and trigger texts is printed by every
# printing tool in the text escape of docs/CLI.md ("Printing spool text")
# or, in JSON, kept whole; comms that differ after a NUL stay apart; sums
# past 2^64 ns are refused or printed exactly, never wrapped; folded output
# drops no deep interval; memory follows the intervals, not the threads
# the spool defines.

# build_allbytes: allbytes.spulse. Threads 0..15 have comms of 16 byte
# values each (0x00..0xff in order), module 0's path holds every byte, two
# identities hold bytes 0x00..0x7f and 0x80..0xff in their hosts, a trigger
# text holds every byte (256, the limit). Each thread has one sample in the
# module and one off-CPU interval woken by the next thread.
build_allbytes() {
	python3 - >allbytes.txt <<'EOF' || return 1
def esc(bs):
    return ''.join('\\x%02x' % b for b in bs)
allb = bytes(range(256))
print('header start_us=1000000 interval_us=1000')
print('identity source=0 recording_id=01 start_us=1 host=%s machine_id=%s kernel=%s'
      % (esc(allb[:128]), esc(allb[:64]), esc(b'k\x00\x1b')))
print('identity source=1 recording_id=02 start_us=2 host=%s boot_id=%s kernel=k2'
      % (esc(allb[128:]), esc(allb[192:])))
print('module id=0 pid=1 start=0x400000 end=0x500000 path=%s' % esc(allb))
print('frame id=0 kind=module module=0 rel=0x10')
print('frame id=1 kind=module module=0 rel=0x20')
print('stack id=0 parent=root frame=0')
print('stack id=1 parent=0 frame=1')
for i in range(16):
    print('thread id=%d pid=%d tid=%d comm=%s'
          % (i, 100 + i, 100 + i, esc(allb[16 * i:16 * i + 16])))
    if i >= 8:
        print('thread-source thread=%d source=1' % i)
for i in range(16):
    print('sample dt_ns=1000 thread=%d stack=%d' % (i, i % 2))
for i in range(16):
    print('offcpu t=%d thread=%d stack=1 state=S cpu_out=0 cpu_in=0 '
          'blocked_ns=1000000 runq_ns=1000 waker=%d waker_stack=0 waker_cpu=0'
          % (100000 + i, i, (i + 1) % 16))
print('trigger t=200000 reason=manual seq=0 text=%s' % esc(allb))
EOF
	"$SPOOLGEN" <allbytes.txt >allbytes.spulse || return 1
	"$SP" check allbytes.spulse >check.out 2>&1 ||
		die "allbytes spool invalid: $(cat check.out)"
}

# assert_clean_text FILE WHAT: FILE holds no terminal control byte (C0 but
# tab and newline, DEL, C1) and is well-formed UTF-8.
assert_clean_text() {
	python3 - "$1" "$2" <<'EOF'
import sys
data = open(sys.argv[1], 'rb').read()
try:
    text = data.decode('utf-8')
except UnicodeDecodeError as e:
    sys.exit('%s: not UTF-8: %s' % (sys.argv[2], e))
for i, ch in enumerate(text):
    o = ord(ch)
    if (o < 0x20 and ch not in '\t\n') or 0x7f <= o < 0xa0:
        sys.exit('%s: control character U+%04X at %d: %r'
                 % (sys.argv[2], o, i, text[max(0, i - 20):i + 20]))
EOF
}

# The escaped text of bytes, per CLI.md's rule (tests check the tools
# against this independent statement of it).
esc_text() {
	python3 -c '
import sys
bs = bytes.fromhex(sys.argv[1])
out, i = [], 0
while i < len(bs):
    b = bs[i]
    if 0x20 <= b <= 0x7e and b != 0x5c:
        out.append(chr(b)); i += 1; continue
    if b >= 0xc2:
        n = 2 if b < 0xe0 else 3 if b < 0xf0 else 4
        try:
            ch = bs[i:i + n].decode("utf-8")
            if len(ch) == 1 and ord(ch) >= 0xa0:
                out.append(ch); i += n; continue
        except UnicodeDecodeError:
            pass
    out.append("\\x%02x" % b); i += 1
sys.stdout.write("".join(out))' "$1"
}

test_hostile_every_byte_escaped_by_every_printing_tool() {
	build_allbytes || return 1
	local -a cmds=(
		"report --sort comm,sym"
		"report --sort comm,pid,dso,sym"
		"report --sort host,comm"
		"report -g caller"
		"report --off-cpu --sort comm,sym"
		"latency --top 16"
		"latency --per-thread"
		"check"
		"flame --folded"
		"flame --folded --root tid"
		"flame --folded --root host"
		"flame --wakers --folded"
		"export --format perf-script"
		"export --format folded"
		"diff allbytes.spulse"
		"diff --sort comm,dso,sym allbytes.spulse"
		"top --iterations 1 -n 50"
	)
	local c i=0
	for c in "${cmds[@]}"; do
		i=$((i + 1))
		# shellcheck disable=SC2086
		"$SP" $c allbytes.spulse >"o$i" 2>"e$i" ||
			die "$c failed: $(head -c 300 "e$i")" || return 1
		[ -s "o$i" ] || die "$c printed nothing" || return 1
		assert_clean_text "o$i" "$c" || return 1
	done
	# the comms and the identity host appear escaped, whole
	local want
	want=$(esc_text 000102030405060708090a0b0c0d0e0f)
	grep -qF -- "$want" o1 || die "report: comm 0..15 not as '$want'" || return 1
	want=$(esc_text 707172737475767778797a7b7c7d7e7f)
	grep -qF -- "$want" o6 || die "latency: comm 0x70.. not as '$want'" || return 1
	want=$(esc_text 808182838485868788898a8b8c8d8e8f)
	grep -qF -- "$want" o7 || die "latency --per-thread: comm 0x80.. not as '$want'" || return 1
	want=$(esc_text "$(python3 -c 'print(bytes(range(128)).hex())')")
	grep -qF -- "host=$want " o8 || die "check: host not as '$want'" || return 1
	want=$(esc_text f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff)
	grep -qF -- "$want" o13 || die "perf-script: comm not as '$want'" || return 1
	# the SVG: well-formed XML, the comm escaped in it
	"$SP" flame --root comm allbytes.spulse -o f.svg 2>/dev/null ||
		die "flame svg failed" || return 1
	python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' f.svg ||
		die "flame SVG is not well-formed XML" || return 1
	want=$(esc_text 101112131415161718191a1b1c1d1e1f)
	grep -qF -- "$want" f.svg || die "svg: comm not as '$want'" || return 1
}

# A module path holding every byte value (NUL first) prints whole under
# the one rule in every text view of an unresolved frame's label and dso,
# and whole in JSON: the symbolizer hands the path out with its length
# (the old one made its NUL the text \x00, printed \x5cx00).
test_hostile_module_path_bytes_whole() {
	build_allbytes || return 1
	local want wantf c
	want=$(esc_text "$(python3 -c 'print(bytes(range(256)).hex())')")
	wantf=${want//;/:}	# folded shows ';' as ':'
	for c in "report --sort sym" "report --sort dso,sym" "report -g caller" \
		 "latency --top 1" "diff allbytes.spulse" \
		 "export --format perf-script"; do
		# shellcheck disable=SC2086
		expect_rc 0 "$SP" $c allbytes.spulse || return 1
		grep -qF -- "$want" out ||
			die "$c: path not whole as '$want': $(head -c 400 out)" ||
			return 1
		grep -qF 'x5cx00' out && die "$c: NUL as x5cx00" && return 1
	done
	for c in "flame --folded" "flame --wakers --folded"; do
		# shellcheck disable=SC2086
		expect_rc 0 "$SP" $c allbytes.spulse || return 1
		grep -qF -- "0x20 [$wantf]" out ||
			die "$c: label not '0x20 [$wantf]': $(head -c 400 out)" ||
			return 1
	done
	"$SP" export --format json allbytes.spulse >x.json 2>/dev/null ||
		die "export json failed" || return 1
	"$SP" export --format speedscope allbytes.spulse >s.json 2>/dev/null ||
		die "export speedscope failed" || return 1
	"$SP" export --format trace-event allbytes.spulse >t.json 2>/dev/null ||
		die "export trace-event failed" || return 1
	"$SP" report --sort sym --json allbytes.spulse >r.json 2>/dev/null ||
		die "report --json failed" || return 1
	python3 - <<'PY'
import json, sys
path = ''.join(chr(b) for b in range(256))
label = '0x20 [' + path + ']'
x = json.load(open('x.json'))
fr = [f for f in x['frames'] if f['addr'] == '0x20']
if not fr or fr[0]['dso'] != path or fr[0]['name'] != label:
    sys.exit('export json frame: %r' % fr[:1])
s = json.load(open('s.json'))
names = [f['name'] for f in s['shared']['frames']]
if label not in names:
    sys.exit('speedscope: no frame %r in %r' % (label[:20], names))
t = json.load(open('t.json'))
ev = t['traceEvents'] if isinstance(t, dict) else t
stacks = [e['args']['stack'] for e in ev
          if isinstance(e.get('args'), dict) and 'stack' in e['args']]
if not any(label in st for st in stacks):
    sys.exit('trace-event: no %r in the stacks %r' % (label[:20], stacks[:1]))
r = json.load(open('r.json'))
if label not in [row['function'] for row in r['rows']]:
    sys.exit('report --json: no function %r' % label[:20])
PY
}

# JSON outputs keep every byte: comms, identity strings, trigger text.
test_hostile_json_keeps_every_byte() {
	build_allbytes || return 1
	"$SP" report --sort comm --json allbytes.spulse >r.json 2>/dev/null ||
		die "report --json failed" || return 1
	"$SP" check --json allbytes.spulse >c.json 2>/dev/null ||
		die "check --json failed" || return 1
	"$SP" export --format trace-event allbytes.spulse >t.json 2>/dev/null ||
		die "trace-event failed" || return 1
	python3 - <<'EOF'
import json, sys
allb = bytes(range(256))
r = json.load(open('r.json'))
comms = sorted(row['comm'] for row in r['rows'])
if len(comms) != 16:
    sys.exit('report --json: %d comm rows, want 16' % len(comms))
c = json.load(open('c.json'))
hosts = [s['host'] for s in c['sources']]
if len(hosts) != 2 or len(hosts[0]) != 128 or len(hosts[1]) != 128:
    sys.exit('check --json: host lengths %r' % [len(h) for h in hosts])
if hosts[0] != ''.join(chr(b) for b in range(128)):
    sys.exit('check --json: host 0 %r' % hosts[0])
if len(c['sources'][0]['machine_id']) != 64:
    sys.exit('check --json: machine_id cut: %r' % c['sources'][0]['machine_id'])
if c['sources'][0]['kernel'] != 'k\x00\x1b':
    sys.exit('check --json: kernel %r' % c['sources'][0]['kernel'])
t = json.load(open('t.json'))
ev = t['traceEvents'] if isinstance(t, dict) else t
texts = [e['args']['text'] for e in ev if isinstance(e.get('args'), dict) and 'text' in e['args']]
if len(texts) != 1 or len(texts[0]) < 256 - 64:
    sys.exit('trace-event: trigger text %r' % texts)
if not texts[0].startswith(''.join(chr(b) for b in range(128))):
    sys.exit('trace-event: trigger text cut: %r' % texts[0][:40])
EOF
}

# sql keeps every byte of identity strings and comms (issue 25).
test_hostile_sql_keeps_every_byte() {
	build_allbytes || return 1
	expect_rc 0 "$SP" sql a.db allbytes.spulse || return 1
	python3 - <<'PY'
import sqlite3, sys
db = sqlite3.connect('a.db')
db.text_factory = bytes
hosts = sorted(r[0] for r in db.execute('SELECT host FROM recordings'))
if hosts != [bytes(range(128)), bytes(range(128, 256))]:
    sys.exit('sql hosts: %r' % hosts)
mids = [r[0] for r in db.execute('SELECT machine_id FROM recordings ORDER BY source')]
if mids[0] != bytes(range(64)):
    sys.exit('sql machine_id: %r' % mids[0])
comms = sorted(r[0] for r in db.execute('SELECT comm FROM threads'))
if comms != sorted(bytes(range(16 * i, 16 * i + 16)) for i in range(16)):
    sys.exit('sql comms: %r' % comms[:3])
PY
}

# Two comms that differ only after a NUL are two report rows (issue 25).
test_hostile_comms_differing_after_nul_are_two_rows() {
	cat >nul.txt <<'EOF'
header start_us=1000000 interval_us=1000
frame id=0 kind=user addr=0x1000
stack id=0 parent=root frame=0
thread id=0 pid=1 tid=1 comm=c\x00d
thread id=1 pid=1 tid=1 comm=c\x00e
sample dt_ns=1 thread=0 stack=0
sample dt_ns=1 thread=1 stack=0
sample dt_ns=1 thread=1 stack=0
EOF
	"$SPOOLGEN" <nul.txt >nul.spulse || return 1
	expect_rc 0 "$SP" report --sort comm nul.spulse || return 1
	grep -q 'c\\x00d *$' out || die "no row c\\x00d: $(cat out)" || return 1
	grep -q 'c\\x00e *$' out || die "no row c\\x00e: $(cat out)" || return 1
	grep -q '66.67%.*c\\x00e' out || die "c\\x00e is not 2 of 3: $(cat out)" || return 1
}

# build_huge: ten intervals of 9223372036853775807 ns each (within the
# format's bounds), one by thread a, nine by thread b: 10% / 90% of a total
# of 92233720368537758070 ns, past 2^64.
build_huge() {
	{
		cat <<'EOF'
header start_us=1 interval_us=1000
frame id=0 kind=kernel addr=0xffffffff81000310
frame id=1 kind=kernel addr=0xffffffff81000410
stack id=0 parent=root frame=0
stack id=1 parent=root frame=1
thread id=0 pid=1 tid=1 comm=a
thread id=1 pid=2 tid=2 comm=b
offcpu t=0 thread=0 stack=0 state=S cpu_out=0 cpu_in=0 blocked_ns=9223372036853775807 runq_ns=0 waker=1 waker_stack=1 waker_cpu=0
EOF
		for _ in 1 2 3 4 5 6 7 8 9; do
			echo "offcpu t=0 thread=1 stack=1 state=S cpu_out=0 cpu_in=0 blocked_ns=9223372036853775807 runq_ns=0 waker=0 waker_stack=0 waker_cpu=0"
		done
	} >huge.txt
	"$SPOOLGEN" <huge.txt >huge.spulse || return 1
	"$SP" check huge.spulse >/dev/null 2>&1 || die "huge spool invalid"
}

test_hostile_sums_past_2_64_never_wrap() {
	build_huge || return 1
	# latency sums in 128 bits: the exact total
	expect_rc 0 "$SP" latency --json huge.spulse || return 1
	grep -q '"blocked_ns":92233720368537758070,' out ||
		die "latency blocked_ns: $(head -c 200 out)" || return 1
	expect_rc 0 "$SP" latency huge.spulse || return 1
	grep -q 'off-CPU, 92233720368537757\.[0-9]* ms\|92233720368537[0-9]*\.[0-9]* ms off-CPU' out ||
		die "latency text total: $(head -n 1 out)" || return 1
	# report and flame refuse with a reason rather than print a wrapped sum
	expect_rc 1 "$SP" report --off-cpu huge.spulse || return 1
	grep -q '2^64 ns' err || die "report: $(cat err)" || return 1
	[ ! -s out ] || die "report printed: $(cat out)" || return 1
	expect_rc 1 "$SP" flame --wakers --folded huge.spulse || return 1
	grep -q '2^64 ns' err || die "flame --wakers: $(cat err)" || return 1
	expect_rc 1 "$SP" flame --off-cpu --folded huge.spulse || return 1
	grep -q '2^64 ns' err || die "flame --off-cpu: $(cat err)" || return 1
	# a filter that brings the total under 2^64 gives the true split
	expect_rc 0 "$SP" report --off-cpu --tid 1 huge.spulse || return 1
	grep -q '100.00%' out || die "report --tid 1: $(cat out)" || return 1
	# sql refuses the load instead of failing in its views later
	expect_rc 1 "$SP" sql h.db huge.spulse || return 1
	grep -q '2^63-1 ns' err || die "sql: $(cat err)" || return 1
}

# A wakers interval deeper than 1025 frames (blocked 1024 + "--" + waker)
# is in the folded output, as in the SVG.
test_hostile_folded_keeps_deep_wakers_interval() {
	python3 - >deep.txt <<'EOF'
print('header start_us=1000000 interval_us=1000')
for i in range(1024):
    print('frame id=%d kind=user addr=%d' % (i, 0x1000 + 16 * i))
print('stack id=0 parent=root frame=0')
for i in range(1, 1024):
    print('stack id=%d parent=%d frame=%d' % (i, i - 1, i))
print('thread id=0 pid=1 tid=1 comm=a')
print('thread id=1 pid=1 tid=2 comm=b')
print('offcpu t=10 thread=0 stack=1023 state=S cpu_out=0 cpu_in=0 '
      'blocked_ns=5000 runq_ns=0 waker=1 waker_stack=1023 waker_cpu=0')
EOF
	"$SPOOLGEN" <deep.txt >deep.spulse || return 1
	"$SP" check deep.spulse >/dev/null 2>&1 || die "deep spool invalid" || return 1
	expect_rc 0 "$SP" flame --wakers --folded deep.spulse || return 1
	[ "$(wc -l <out)" -eq 1 ] || die "folded lines: $(wc -l <out)" || return 1
	local frames
	frames=$(awk '{print $1}' out | tr ';' '\n' | wc -l)
	[ "$frames" -eq 2049 ] || die "folded frames $frames, want 1024 + 1 + 1024" || return 1
	grep -q ' 5000$' out || die "weight: $(tail -c 40 out)" || return 1
}

# 200,000 defined threads and no intervals: latency --per-thread does not
# allocate per defined thread (was 821 MB). Bounded by address space, not
# by time: 200 MB is a quarter of what it used to take.
test_hostile_latency_memory_follows_intervals_not_threads() {
	python3 - >many.txt <<'EOF'
print('header start_us=1000000 interval_us=1000')
print('frame id=0 kind=user addr=0x1000')
print('stack id=0 parent=root frame=0')
for i in range(200000):
    print('thread id=%d pid=%d tid=%d comm=t' % (i, i + 1, i + 1))
print('offcpu t=10 thread=7 stack=0 state=S cpu_out=0 cpu_in=0 '
      'blocked_ns=5000 runq_ns=10 waker=none')
EOF
	"$SPOOLGEN" <many.txt >many.spulse || return 1
	case $SP in *san*) return 0 ;; esac	# ASan's shadow memory
	( ulimit -v 400000; "$SP" latency --per-thread many.spulse >out 2>err ) ||
		die "latency --per-thread in 400 MB of address space: $(cat err)" || return 1
	grep -c '^== thread' out | grep -qx 1 || die "threads shown: $(grep '^==' out)" || return 1
	grep -q '^== thread t 8/8 ==' out || die "$(grep '^==' out)"
}

# 100,000 threads, every one with an interval: latency --per-thread keeps
# a few words per thread, not its histograms (which it counts as it
# prints each thread): the old tool took 526 MB here (5 KB per thread),
# now ~25 MB; bounded by address space, 400 MB, not by time.
test_hostile_latency_per_thread_memory_with_every_thread_reported() {
	python3 - >all.txt <<'EOF'
print('header start_us=1000000 interval_us=1000')
print('frame id=0 kind=user addr=0x1000')
print('stack id=0 parent=root frame=0')
n = 100000
for i in range(n):
    print('thread id=%d pid=%d tid=%d comm=t' % (i, i // 4 + 1, i + 1))
for i in range(n):
    print('offcpu t=%d thread=%d stack=0 state=%s cpu_out=0 cpu_in=0 '
          'blocked_ns=%d runq_ns=10 waker=none'
          % (10 + i, i, 'SD'[i % 2], 5000 + i))
EOF
	"$SPOOLGEN" <all.txt >all.spulse || return 1
	case $SP in *san*) return 0 ;; esac	# ASan's shadow memory
	( ulimit -v 400000; "$SP" latency --per-thread --top 0 all.spulse >out 2>err ) ||
		die "latency --per-thread in 400 MB of address space: $(tail -c 300 err)" || return 1
	[ "$(grep -c '^== thread' out)" -eq 100000 ] ||
		die "threads shown: $(grep -c '^==' out)" || return 1
	grep -q '^== thread t 25000/99999 ==' out || die "no thread 25000/99999" || return 1
	# each thread: its run-queue histogram and the one state it left in
	[ "$(grep -c '^off-CPU time (blocked + runq), state S' out)" -eq 50000 ] ||
		die "state S histograms: $(grep -c 'state S' out)" || return 1
	( ulimit -v 400000; "$SP" latency --per-thread --json --top 0 all.spulse >j.json 2>err ) ||
		die "latency --per-thread --json: $(tail -c 300 err)" || return 1
	python3 -c '
import json
j = json.load(open("j.json"))
h = j["histograms"]
assert len(h) == 200000, len(h)
assert sum(x["count"] for x in h if x["metric"] == "runq") == 100000
' || die "json histograms" || return 1
}

# A file shorter than the header (0 bytes too) is an error naming the byte
# offset for every tool that reads spools (issue 26; FORMAT.md 6).
test_hostile_file_shorter_than_header_is_an_error() {
	: >empty.spulse
	printf 'SPULSE3' >short.spulse
	local f c
	for f in empty.spulse short.spulse; do
		for c in check report flame latency "export --format json" dump; do
			# shellcheck disable=SC2086
			expect_rc 1 "$SP" $c "$f" -o /dev/null 2>/dev/null ||
			expect_rc 1 "$SP" $c "$f" || return 1
			grep -q "^$f: offset [0-9]*: file ends inside the stream header" err ||
				die "$c $f: $(cat err)" || return 1
		done
	done
	expect_rc 1 "$SP" check short.spulse || return 1
	grep -q 'offset 7:' err || die "short: $(cat err)"
}

# Errors say the reason once; '-' is refused with a reason (issue 26).
test_hostile_errors_say_the_reason_once() {
	mkdir adir
	expect_rc 1 "$SP" report /nonexistent.spulse || return 1
	[ "$(cat err)" = "/nonexistent.spulse: No such file or directory" ] ||
		die "nonexistent: $(cat err)" || return 1
	expect_rc 1 "$SP" check adir || return 1
	[ "$(cat err)" = "adir: not a regular file" ] || die "adir: $(cat err)" || return 1
	expect_rc 1 "$SP" report - || return 1
	grep -q 'standard input is not supported' err || die "-: $(cat err)"
}

# report --json -g is refused, not silently ignored; flame refuses to write
# its SVG to a terminal (issue 26).
test_hostile_refusals_json_graph_and_svg_on_terminal() {
	build_huge || return 1
	expect_rc 2 "$SP" report --json -g caller huge.spulse || return 1
	grep -q -- '-g (call graph) has no JSON form' err || die "$(cat err)" || return 1
	command -v script >/dev/null || { echo "note: no script(1), terminal case skipped"; return 0; }
	script -qec "$SP flame huge.spulse" /dev/null >tty.out 2>&1
	grep -q 'not for a terminal' tty.out || die "flame on a tty: $(head -c 200 tty.out)" || return 1
	! grep -q '<svg' tty.out || die "flame wrote SVG to the terminal"
}

# FORMAT.md 6/8: a cut cpu payload whose len proves bytes left over is an
# error at the first byte left over; trigger value/threshold of a manual
# trigger are accepted and printed as recorded; a late kind-5 record puts
# the thread's earlier samples under its source.
test_hostile_format_questions_settled() {
	printf 'header start_us=1 interval_us=1\nraw hex=0901050300\n' |
		"$SPOOLGEN" >cut.spulse || return 1
	expect_rc 1 "$SP" check cut.spulse || return 1
	grep -q 'offset 14: extension payload length mismatch: 4 bytes left over' err ||
		die "cut payload: $(cat err)" || return 1
	printf 'header start_us=1 interval_us=1\ntrigger t=5 reason=manual seq=1 value_ns=7 threshold_ns=9 text=x\n' |
		"$SPOOLGEN" >trig.spulse || return 1
	expect_rc 0 "$SP" check trig.spulse || return 1
	expect_rc 0 "$SP" export --format trace-event trig.spulse || return 1
	grep -q '"value_ns":7,"threshold_ns":9' out || die "trigger: $(cat out)" || return 1
	cat >late.txt <<'EOT'
header start_us=1000000 interval_us=1000
identity source=0 host=first
identity source=1 host=second
frame id=0 kind=user addr=0x1000
stack id=0 parent=root frame=0
thread id=0 pid=1 tid=1 comm=a
sample dt_ns=1 thread=0 stack=0
sample dt_ns=1 thread=0 stack=0
thread-source thread=0 source=1
EOT
	"$SPOOLGEN" <late.txt >late.spulse || return 1
	expect_rc 0 "$SP" report --sort host late.spulse || return 1
	grep -q '100.00%.*second' out || die "late kind 5: $(cat out)" || return 1
	! grep -q 'first' out || die "late kind 5 split: $(cat out)"
}

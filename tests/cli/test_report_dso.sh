# report --sort dso: one row per module; the truncated marker (the root of
# a stack the walk had to cut) is its own row, named [truncated], not an
# empty module name.

test_report_sort_dso_names_the_truncated_marker() {
	cat >t.txt <<'TXT'
header start_us=1000000 interval_us=1000
module id=0 pid=7 start=0x400000 end=0x500000 file_offset=0 path=/x/app
frame id=0 kind=truncated
frame id=1 kind=module module=0 rel=0x1234
frame id=2 kind=kernel addr=0xffffffff81000000
stack id=0 parent=root frame=0
stack id=1 parent=0 frame=1
stack id=2 parent=root frame=1
stack id=3 parent=2 frame=2
thread id=0 pid=7 tid=7 comm=app
sample t=1000 thread=0 stack=1
sample t=2000 thread=0 stack=1
sample t=3000 thread=0 stack=3
TXT
	"$SPOOLGEN" <t.txt >t.spulse || return 1
	expect_rc 0 "$SP" report t.spulse --sort dso --json --top 0 || return 1
	python3 - <<'PY' || die "dso rows: $(cat out)"
import json
rows = {r["module"]: (r["self"], r["total"]) for r in json.load(open("out"))["rows"]}
assert rows == {"/x/app": (2, 3), "[kernel.kallsyms]": (1, 1),
                "[truncated]": (0, 2)}, rows
PY
}

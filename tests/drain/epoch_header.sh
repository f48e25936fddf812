# Sourced by tests/drain/run.sh (uses its fake, pass, fail, $work,
# $drain_san, $spulse): an epoch header (FORMAT.md section 7) whose
# start_us or interval_us differs from the stream's first header is
# corruption at that field (FORMAT.md section 8, issue 25): the drainer
# abandons that CPU's stream there with a message naming the field, writes
# what it queued before (a valid spool, exit 3 as for any stream error),
# and queues nothing of the bad epoch (whose times would all be moved).
# The old drainer took the epoch's start as the new base: exit 0, the
# epoch's samples shifted by the difference.

# epoch_patch FILE FIELD: add 1 to the last byte of FIELD (start|interval)
# in the second stream header of FILE (same varint length); prints the
# field's file offset
epoch_patch() {
	python3 - "$1" "$2" <<'EOF'
import sys
path, field = sys.argv[1], sys.argv[2]
data = bytearray(open(path, 'rb').read())
magic = b'SPULSE3\x00'
first = data.find(magic)
second = data.find(magic, first + 1)
if first != 0 or second < 0:
    sys.exit('no second header in %s' % path)
def uvar(p):
    n = 0
    while data[p + n] & 0x80:
        n += 1
    return n + 1
off = second + len(magic)
if field == 'interval':
    off += uvar(off)
n = uvar(off)
last = off + n - 1
if data[last] >= 0x7f:
    sys.exit('cannot patch %s keeping its length' % field)
data[last] += 1
open(path, 'wb').write(bytes(data))
print(off)
EOF
}

epoch_header_case() {	# NAME FIELD
	local name=$1 field=$2 off rc n nt
	fake "$name" --cpus 2 --samples 600 --seed 31 --offcpu 20 \
		--epoch-ids 60 || { fail "$name" "gen_fake failed"; return; }
	off=$(epoch_patch "$work/$name/spulse/cpu0" "$field") ||
		{ fail "$name" "patch: $off"; return; }
	"$drain_san" --debugfs "$work/$name/spulse" -o "$work/$name/out.spulse" \
		--once --no-kallsyms 2>"$work/$name/err"
	rc=$?
	n=$("$spulse" dump "$work/$name/out.spulse" 2>/dev/null | grep -c '^sample ')
	nt=$(grep -c '^S ' "$work/$name/truth")
	if [ $rc -eq 3 ] &&
		grep -q "^spulse-drain: cpu0: offset $off: epoch 1 header ${field}_us [0-9]* differs from the stream's [0-9]* .*stream abandoned" \
			"$work/$name/err" &&
		"$spulse" check "$work/$name/out.spulse" >/dev/null 2>&1 &&
		[ "$n" -gt 0 ] && [ "$n" -lt "$nt" ]; then
		pass "$name (refused at offset $off; $n of $nt samples kept, the rest after the bad header)"
	else
		fail "$name" "exit $rc (want 3), offset $off, samples $n of $nt: $(tail -n 3 "$work/$name/err")"
	fi
}

epoch_header_case epoch-header-other-start-refused start
epoch_header_case epoch-header-other-interval-refused interval

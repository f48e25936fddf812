#!/usr/bin/env bash
# make fault-relay-race (not in make check; docs/FAULT.md, "Relay readers"):
# FAULT_RACES rounds (default 20) per reader of tests/kunit/relay_race.c in
# one boot of the stock kernel (tests/vm/run-vm.sh): a process on CPU 0
# writes triggers into a 3 x 512-byte relay buffer flat out for
# FAULT_RACE_SECS (default 5) while CPU 1 reads cpu0, either as spulse-drain
# does (published sub-buffers only, `flush` now and then) or as a plain
# reader would (RELAY_RACE_NAIVE=1: all that read() returns). Prints per
# reader the rounds that read every accepted trigger exactly once.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-$top/build}
n=${FAULT_RACES:-20}
secs=${FAULT_RACE_SECS:-5}
out=$BUILD/fault-relay-race
make --no-print-directory -C "$top" BUILD="$BUILD" module >/dev/null ||
	{ echo "fault-relay-race: build failed"; exit 1; }
rm -rf "$out"
mkdir -p "$out"
${CC:-cc} -O1 -g -static -Wall -Wextra -Werror -o "$out/relay_race" \
	"$top/tests/kunit/relay_race.c" || { echo "fault-relay-race: relay_race.c build failed"; exit 1; }
"$top/tests/vm/run-vm.sh" --timeout $((200 + 2 * n * (secs + 8))) --out "$out" \
	-- "$here/guest-relay-race.sh" "$top/spulse.ko" "$out/relay_race" "$n" "$secs" \
	>"$out/run-vm.log" 2>&1
rc=$?
res=$out/relay-race.txt
[ -s "$res" ] || { echo "fault-relay-race: no results (run-vm exit $rc; $out/console.log)"; exit 1; }
printf '%-8s %6s %6s %6s %9s %12s\n' reader rounds exact lost repeated accepted
bad=0
for m in drain naive; do
	# round I READER accepted A found F end E bytes B
	awk -v m="$m" '$3 == m {
		r++; acc += $5
		if ($7 == $5 && $9 == $11) e++
		else if ($7 < $5) l++
		else p++
	} END { printf "%-8s %6d %6d %6d %9d %12d\n", m, r, e, l, p, acc }' "$res"
done
d=$(awk '$3 == "drain"' "$res" | wc -l)
de=$(awk '$3 == "drain" && $7 == $5 && $9 == $11' "$res" | wc -l)
[ "$rc" -eq 0 ] && [ "$d" -eq "$n" ] && [ "$de" -eq "$n" ] || bad=1
echo "fault-relay-race: spulse-drain's reader exact in $de of $d rounds (run-vm exit $rc; $res)"
exit $bad

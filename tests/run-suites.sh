#!/usr/bin/env bash
# Run each named suite (make check-SUITE), then print the grand total and
# the seconds each suite took (cache fills included: the first suite that
# needs a kernel, chroot or debug kernel fetches or builds it, or waits
# for tests/warm-caches.sh, started here in the background, to do so: its
# lines, the time each part took, follow the summary).
# A suite reports through build/check/SUITE.result ("passed failed"); a suite
# that exits non-zero without a result counts as one failure.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
out=${BUILD:-$top/build}/check
mkdir -p "$out"
total_p=0
total_f=0
summary=()
t_all=$SECONDS
# the caches the later suites need, filled at nice 19 beside the first
# ones (tests/warm-caches.sh; WARM=0: each suite fills what it needs)
warm=
if [ "${WARM:-1}" != 0 ]; then
	nice -n 19 "$top/tests/warm-caches.sh" > "$out/warm.log" 2>&1 &
	warm=$!
fi
for s in "$@"; do
	rm -f "$out/$s.result"
	echo "=== suite $s ==="
	t0=$SECONDS
	make --no-print-directory -C "$top" "check-$s"
	rc=$?
	if [ -s "$out/$s.result" ]; then
		read -r p f < "$out/$s.result"
	else
		p=0
		f=1
	fi
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
	fi
	summary+=("$(printf '%-14s %5d passed %5d failed %6d s' "$s" "$p" "$f" \
		$((SECONDS - t0)))")
	total_p=$((total_p + p))
	total_f=$((total_f + f))
done
if [ -n "$warm" ]; then
	wait "$warm"
fi
echo "=== summary ==="
printf '%s\n' "${summary[@]}"
[ -z "$warm" ] || sed 's/^/  /' "$out/warm.log"
echo "$total_p passed, $total_f failed in $((SECONDS - t_all)) s"
[ "$total_f" -eq 0 ]

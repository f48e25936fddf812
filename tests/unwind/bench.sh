#!/usr/bin/env bash
# bench-unwind: table size and build time for Debian's own binaries.
# Prints one row per file: rows, bytes (12 per row), the ADD message, the
# fastest of 5 cold builds (no cache) and a load from the build-id cache.
# usage: bench.sh SPULSE
set -u
spulse=$1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/spulse-unwind-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
printf '%-40s %9s %10s %10s %10s %10s\n' file rows bytes add_msg build_ms cached_ms
total=0
for f in /usr/bin/python3.11 /lib/x86_64-linux-gnu/libc.so.6 \
	/lib64/ld-linux-x86-64.so.2 /usr/bin/xz /bin/gzip; do
	[ -r "$f" ] || continue
	best=
	for _ in 1 2 3 4 5; do
		out=$("$spulse" unwind show "$f" --summary) || exit 1
		ms=$(sed -n 's/^build_ms *//p' <<<"$out")
		if [ -z "$best" ] || awk -v a="$ms" -v b="$best" 'BEGIN{exit !(a < b)}'; then
			best=$ms
		fi
	done
	rows=$(sed -n 's/^rows *//p' <<<"$out")
	bytes=$(sed -n 's/^bytes *\([0-9]*\).*/\1/p' <<<"$out")
	msg=$(sed -n 's/^bytes .*ADD message \([0-9]*\)).*/\1/p' <<<"$out")
	"$spulse" unwind build "$f" -o "$tmp/c" >/dev/null || exit 1
	cached=$("$spulse" unwind build "$f" -o "$tmp/c" | sed -n 's/.*, cached in \([0-9.]*\) ms$/\1/p')
	printf '%-40s %9s %10s %10s %10s %10s\n' "$f" "$rows" "$bytes" "$msg" "$best" "$cached"
	case $f in
	*python3*|*libc.so*|*ld-linux*) total=$((total + bytes)) ;;
	esac
done
echo "python3 process (python3.11 + libc + ld.so): $total bytes of tables"

#!/usr/bin/env bash
# kmod-lint suite: one test line per check, result in $BUILD/check/kmod-lint.result
#   w1         the module builds under W=1 with zero warnings
#   sparse     make C=2 reports nothing from kmod/ or include/spulse/
#   checkpatch checkpatch.pl --no-tree -f: 0 errors, 0 warnings, per file
#   kernel-doc scripts/kernel-doc -v -none over kmod/*.c and kmod/*.h: no
#              warning (missing Return:, stale or missing @members, ...)
set -u
: "${KDIR:?}" "${TOP:?}" "${BUILD:?}" "${CHECKPATCH:?}" "${KERNELDOC:?}"
out=$BUILD/check
log=$out/kmod-lint
mkdir -p "$log"
pass=0
fail=0

result() {	# name ok detail
	if [ "$2" = ok ]; then
		pass=$((pass + 1))
		echo "PASS kmod-lint/$1"
	else
		fail=$((fail + 1))
		echo "FAIL kmod-lint/$1: $3"
	fi
}

if [ ! -f "$KDIR/Makefile" ]; then
	result w1 no "no kernel build tree (KDIR='$KDIR')"
	result sparse no "no kernel build tree"
else
	# W=1 changes the command line, so kbuild recompiles every object.
	if ${MAKE:-make} --no-print-directory -C "$KDIR" M="$TOP" W=1 modules \
		>"$log/w1.log" 2>&1; then
		n=$(grep -c 'warning:' "$log/w1.log")
		[ "$n" -eq 0 ] && result w1 ok || result w1 no "$n warnings, see $log/w1.log"
	else
		result w1 no "build failed, see $log/w1.log"
	fi
	# C=2 runs sparse on every object whether or not it is rebuilt.
	if ! command -v sparse >/dev/null; then
		result sparse no "sparse not installed (make deps)"
	elif ${MAKE:-make} --no-print-directory -C "$KDIR" M="$TOP" C=2 modules \
		>"$log/sparse.log" 2>&1; then
		n=$(grep -E "^($TOP/)?(kmod|include/spulse)/[^:]+:[0-9]+:[0-9]+: " \
			"$log/sparse.log" | wc -l)
		[ "$n" -eq 0 ] && result sparse ok ||
			result sparse no "$n findings, see $log/sparse.log"
	else
		result sparse no "build failed, see $log/sparse.log"
	fi
fi

for f in "$TOP"/kmod/*.c "$TOP"/kmod/*.h "$TOP"/include/spulse/*.h; do
	name=checkpatch/${f#"$TOP"/}
	if r=$(perl "$CHECKPATCH" --no-tree --terse -f "$f" 2>&1); then
		result "$name" ok
	else
		result "$name" no "$(printf '%s\n' "$r" | head -n 5 | tr '\n' ' ')"
	fi
done

# -v adds the checks for Return: sections and text outside any section
if r=$(perl "$KERNELDOC" -v -none "$TOP"/kmod/*.c "$TOP"/kmod/*.h 2>&1); then
	n=$(printf '%s\n' "$r" | grep -c 'warning:')
	[ "$n" -eq 0 ] && result kernel-doc ok ||
		result kernel-doc no "$n warnings: $(printf '%s\n' "$r" | grep 'warning:' | head -n 3 | tr '\n' ' ')"
else
	result kernel-doc no "kernel-doc failed: $(printf '%s\n' "$r" | tail -n 2 | tr '\n' ' ')"
fi

echo "$pass $fail" >"$out/kmod-lint.result"
echo "kmod-lint: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

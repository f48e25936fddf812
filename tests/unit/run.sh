#!/usr/bin/env bash
# Run cmocka test binaries with TAP output, print every test line, and write
# the suite result "PASSED FAILED" to RESULT. A binary that dies before
# finishing its plan counts every missing test as failed.
# usage: run.sh RESULT BIN...
set -u
result=$1
shift
passed=0
failed=0
for bin in "$@"; do
	out=$(CMOCKA_MESSAGE_OUTPUT=TAP "$bin" 2>&1)
	rc=$?
	printf '%s\n' "$out" | sed "s|^|$(basename "$bin"): |"
	plan=$(printf '%s\n' "$out" | sed -n 's/^1\.\.\([0-9]*\)$/\1/p' | head -1)
	ok=$(printf '%s\n' "$out" | grep -c '^ok ')
	if [ -z "$plan" ]; then
		plan=$((ok + 1))
	fi
	bad=$((plan - ok))
	if [ "$rc" -ne 0 ] && [ "$bad" -eq 0 ]; then
		bad=1
	fi
	passed=$((passed + ok))
	failed=$((failed + bad))
done
mkdir -p "$(dirname "$result")"
echo "$passed $failed" > "$result"
echo "$(basename "$result" .result): $passed passed, $failed failed"
[ "$failed" -eq 0 ]

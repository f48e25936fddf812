# Helpers for the CLI tests (sourced by run.sh). Every test runs in its own
# empty directory $WORK with $SP the spulse binary under test and $SPOOLGEN
# the raw spool writer. A test fails by returning non-zero; die() explains.

die() {
	echo "FAILED: $*" >&2
	return 1
}

# expect_rc WANT CMD...: run CMD (stdout -> out, stderr -> err), check rc.
expect_rc() {
	local want=$1 rc
	shift
	"$@" >out 2>err
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		echo "command: $*" >&2
		echo "stdout:" >&2; head -n 20 out >&2
		echo "stderr:" >&2; head -n 20 err >&2
		die "exit status $rc, wanted $want"
		return 1
	fi
}

# json_field NAME TEXT: the value of a top-level scalar field of one-line JSON.
json_field() {
	local re="\"$1\":(\"[^\"]*\"|[-0-9]+|true|false)"
	[[ $2 =~ $re ]] || return 1
	echo "${BASH_REMATCH[1]}"
}

# uvar_len N: bytes of N as an unsigned LEB128 varint.
uvar_len() {
	local v=$1 n=1
	while [ "$v" -ge 128 ]; do
		v=$((v >> 7))
		n=$((n + 1))
	done
	echo "$n"
}

# record_offsets FILE: the record boundaries of FILE per `spulse dump
# --offsets` (every record start, then the end of the last record), one per
# line; the header line (offset 0) is left out.
record_offsets() {
	"$SP" dump --offsets "$1" | awk '$2 != "#" || $3 == "end" {print $1}'
}

# patch_byte FILE OFFSET HEXBYTE: overwrite one byte in place.
patch_byte() {
	printf "\\x$3" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# error_offset: the N of "offset N:" in err (the last check/dump stderr).
error_offset() {
	sed -n 's/.*: offset \([0-9][0-9]*\): .*/\1/p' err | head -n 1
}

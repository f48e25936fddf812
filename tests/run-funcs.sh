# Shared runner of shell test functions, sourced by the suites whose tests
# are bash functions run once per spulse binary (tests/cli/run.sh,
# tests/sql/run.sh).
#
#   run_funcs SUITE TESTS BIN...
#
# runs every function named in TESTS (words) once against each BIN, in its
# own fresh directory $WORK (also its cwd), with SP (a private copy of the
# binary) and FLAVOUR (san when the binary's path names san, else opt)
# exported; the caller's optional function funcs_env FLAVOUR exports the
# rest. A test passes with status 0, is skipped with 77 (its last output
# line says why), fails otherwise (the tail of its output is shown).
#
# FUNCS_JOBS tests run at a time (default: the CPUs, at most 4): each has
# its own directory, binary copy and tmux socket, and their lines are
# printed in the order the tests are listed, as soon as each is known.
# Writes $BUILD/check/SUITE.result ("PASSED FAILED") and returns non-zero
# when a test failed.

# funcs_show: print every finished test from the first not yet printed on
funcs_show() {
	local d rc
	while [ "$_fs_shown" -lt "${#_fs_names[@]}" ]; do
		d=$_fs_q/$_fs_shown
		[ -f "$d/rc" ] || return 0
		read -r rc < "$d/rc"
		set -- ${_fs_names[$_fs_shown]}
		case $rc in
		0)
			echo "PASS $1 ${2#test_}"
			_fs_pass=$((_fs_pass + 1)) ;;
		77)
			echo "SKIP $1 ${2#test_}: $(tail -n 1 "$d/work/log")"
			_fs_skip=$((_fs_skip + 1)) ;;
		*)
			echo "FAIL $1 ${2#test_}"
			sed 's/^/    /' "$d/work/log" | tail -n 25
			_fs_fail=$((_fs_fail + 1)) ;;
		esac
		rm -rf "$d"
		_fs_shown=$((_fs_shown + 1))
	done
}

run_funcs() {
	local suite=$1 tests=$2 bin flavour t i jobs
	shift 2
	jobs=${FUNCS_JOBS:-$(nproc 2>/dev/null || echo 1)}
	[ "$jobs" -ge 1 ] 2>/dev/null || jobs=1
	[ "$jobs" -le 4 ] || jobs=4
	_fs_q=$(mktemp -d "${TMPDIR:-/tmp}/spulse-$suite.XXXXXX") || return 1
	_fs_names=()
	_fs_shown=0 _fs_pass=0 _fs_fail=0 _fs_skip=0
	for bin in "$@"; do
		case $bin in
		*san*) flavour=san ;;
		*) flavour=opt ;;
		esac
		cp "$bin" "$_fs_q/spulse-$flavour" || return 1
		for t in $tests; do
			while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
				wait -n
				funcs_show
			done
			i=${#_fs_names[@]}
			_fs_names+=("$flavour $t")
			mkdir -p "$_fs_q/$i/work"
			(
				SP=$_fs_q/spulse-$flavour FLAVOUR=$flavour
				WORK=$_fs_q/$i/work
				export SP FLAVOUR WORK
				if declare -F funcs_env >/dev/null; then
					funcs_env "$flavour"
				fi
				(cd "$WORK" && "$t") > "$WORK/log" 2>&1
				rc=$?
				# the test's files go now: only its output is kept
				find "$WORK" -mindepth 1 -maxdepth 1 ! -name log \
					-exec rm -rf {} +
				# whole or absent: funcs_show() may look at any
				# moment, and an rc file it finds empty (created,
				# not yet written) would read as a failure
				echo "$rc" > "$_fs_q/$i/rc.tmp" &&
					mv "$_fs_q/$i/rc.tmp" "$_fs_q/$i/rc"
			) &
			funcs_show
		done
	done
	while [ "$(jobs -rp | wc -l)" -gt 0 ]; do
		wait -n
		funcs_show
	done
	wait
	funcs_show
	rm -rf "$_fs_q"
	mkdir -p "$BUILD/check"
	echo "$_fs_pass $_fs_fail" > "$BUILD/check/$suite.result"
	if [ "$_fs_skip" -gt 0 ]; then
		echo "$suite: $_fs_pass passed, $_fs_fail failed ($_fs_skip skipped)"
	else
		echo "$suite: $_fs_pass passed, $_fs_fail failed"
	fi
	[ "$_fs_fail" -eq 0 ]
}

# report / flame name C++ functions demangled (--no-demangle keeps the
# mangled names), checked against binutils' c++filt on a PIE built here.

build_cxx() {
	local a m off vaddr filesz load
	command -v g++ >/dev/null || { echo "no g++"; return 2; }
	cat >cxx.cc <<'EOT'
namespace shapes {
struct Circle {
	double r;
	__attribute__((noinline)) double area(int scale) const { return 3.14159 * r * r * scale; }
};
}
volatile double sink;
int main(int argc, char **) { shapes::Circle c{2.0}; sink = c.area(argc); return 0; }
EOT
	g++ -O1 -g -fPIE -pie -o cxx cxx.cc || return 1
	m=$(nm cxx | awk '$3 ~ /Circle4area/ {print $3; exit}')
	a=$(nm cxx | awk '$3 ~ /Circle4area/ {print $1; exit}')
	[ -n "$m" ] || die "no Circle::area symbol" || return 1
	echo "$m" >cxx.mangled
	c++filt "$m" >cxx.demangled
	load=$(readelf -lW cxx | awk '$1 == "LOAD" && / R?W?E / {print $2, $3, $5; exit}')
	read -r off vaddr filesz <<<"$load"
	cat >cxx.txt <<EOT
# header start_us=1000000 interval_us=1000
module id=0 pid=5 start=0x555555554000 end=$(printf '0x%x' $((0x555555554000 + 0x100000))) file_offset=0x0 path=$WORK/cxx build_id=
thread id=0 pid=5 tid=5 comm=cxx
frame id=0 kind=module module=0 rel=$(printf '0x%x' $((0x$a + 2 - vaddr + off)))
stack id=0 parent=root frame=0
sample dt_ns=1000 thread=0 stack=0
sample dt_ns=1000 thread=0 stack=0
EOT
	"$SPOOLGEN" <cxx.txt >cxx.spulse
}

test_report_demangles_cxx_like_cxxfilt() {
	build_cxx
	case $? in 0) ;; 2) return 0 ;; *) return 1 ;; esac
	expect_rc 0 "$SP" report cxx.spulse --json || return 1
	python3 - <<'PY' || die "demangled: $(cat out), c++filt: $(cat cxx.demangled)"
import json
want = open("cxx.demangled").read().strip()
assert json.load(open("out"))["rows"][0]["function"] == want, want
PY
	expect_rc 0 "$SP" report cxx.spulse --json --no-demangle || return 1
	python3 - <<'PY' || die "--no-demangle: $(cat out)"
import json
assert json.load(open("out"))["rows"][0]["function"] == open("cxx.mangled").read().strip()
PY
	expect_rc 0 "$SP" flame cxx.spulse --folded || return 1
	[ "$(cat out)" = "$(cat cxx.demangled) 2" ] || die "flame: $(cat out)"
}

test_report_long_keys_stay_distinct() {
	local long dir off vaddr load a1 a2 i
	# 1000-character names that differ only in their last letters, in a
	# module whose path is ~1.6 KB: with --sort dso,sym the difference
	# lies beyond 2.5 KB of key text
	long=$(printf 'f%.0s' $(seq 1 996))
	dir=$WORK
	for i in 1 2 3 4 5 6 7 8; do
		dir=$dir/$(printf 'd%.0s' $(seq 1 200))
	done
	mkdir -p "$dir" || return 1
	cat >long.c <<EOT
__attribute__((noinline)) int ${long}_one(int x) { return x * 3 + 1; }
__attribute__((noinline)) int ${long}_two(int x) { return x * 5 + 2; }
int main(int argc, char **argv) { (void)argv; return ${long}_one(argc) + ${long}_two(argc); }
EOT
	$CC -O1 -g -no-pie -fno-pie -o "$dir/long" long.c || return 1
	a1=$(nm "$dir/long" | awk '$3 ~ /_one$/ {print $1}')
	a2=$(nm "$dir/long" | awk '$3 ~ /_two$/ {print $1}')
	load=$(readelf -lW "$dir/long" | awk '$1 == "LOAD" && / R?W?E / {print $2, $3; exit}')
	read -r off vaddr <<<"$load"
	cat >long.txt <<EOT
# header start_us=1000000 interval_us=1000
module id=0 pid=5 start=0x400000 end=0x500000 file_offset=$off path=$dir/long build_id=
thread id=0 pid=5 tid=5 comm=long
frame id=0 kind=module module=0 rel=$(printf '0x%x' $((0x$a1 + 1 - vaddr + off)))
frame id=1 kind=module module=0 rel=$(printf '0x%x' $((0x$a2 + 1 - vaddr + off)))
stack id=0 parent=root frame=0
stack id=1 parent=root frame=1
sample dt_ns=1000 thread=0 stack=0
sample dt_ns=1000 thread=0 stack=1
sample dt_ns=1000 thread=0 stack=1
EOT
	"$SPOOLGEN" <long.txt >long.spulse || return 1
	expect_rc 0 "$SP" report long.spulse --json --sort dso,sym || return 1
	json_check out 'sorted((r["function"][-4:], len(r["function"]), r["self"]) for r in j["rows"]) == [("_one", 1000, 1), ("_two", 1000, 2)]' \
		'all(len(r["module"]) > 1600 for r in j["rows"])' ||
		die "long keys merged or cut: $(head -c 300 out)"
}

# No silent hex. A stripped binary: its unresolved addresses are printed as
# the ELF virtual address (what addr2line -e FILE takes, not the file
# offset the spool holds), and one hint per binary on stderr names what
# would resolve them (debug package, DEBUGINFOD_URLS).
test_report_stripped_binary_hint_and_addr2line_addresses() {
	local va line
	build_known || return 1
	strip --strip-all -o stripped known || return 1
	sed "s|path=$WORK/known |path=$WORK/stripped |" known.txt >s.txt
	"$SPOOLGEN" <s.txt >s.spulse || return 1
	cp known.spulse.kallsyms s.spulse.kallsyms
	DEBUGINFOD_URLS= expect_rc 0 "$SP" report --sort sym s.spulse || return 1
	[ "$(grep -c "stripped is stripped: .*DEBUGINFOD_URLS" err)" = 1 ] ||
		die "hint: $(cat err)" || return 1
	# known_alpha_leaf + 4, as the ELF vaddr; addr2line on the unstripped
	# file names the function's source line from it
	va=$(printf '0x%x' $(( 0x$(nm known | awk '$3 == "known_alpha_leaf" {print $1}') + 4 )))
	grep -q " $va \[$WORK/stripped\]$" out ||
		die "no $va row: $(cat out)" || return 1
	line=$(addr2line -e known "$va")
	case $line in *known.c:[0-9]*) ;; *) die "addr2line $va: $line"; return 1 ;; esac
	# an unstripped binary gets no hint
	expect_rc 0 "$SP" report known.spulse || return 1
	! grep -q 'is stripped' err || die "hint for known: $(cat err)"
}

# A spool copied without FILE.kallsyms: its kernel frames stay hex, said
# once on stderr (before: nothing).
test_report_missing_kallsyms_is_said_once() {
	build_known || return 1
	rm known.spulse.kallsyms
	expect_rc 0 "$SP" report known.spulse || return 1
	[ "$(grep -c 'known.spulse: no known.spulse.kallsyms (kernel frames stay hex' err)" = 1 ] ||
		die "stderr: $(cat err)" || return 1
	grep -q '0xffffffff81000123' out || die "kernel frame: $(cat out)"
}

# perf-script's address column is the ELF virtual address too (what
# addr2line -e FILE takes; before: the file offset the spool holds, on
# which addr2line answers ??).
test_perf_script_addresses_are_addr2line_addresses() {
	local va
	build_known || return 1
	expect_rc 0 "$SP" export --format perf-script known.spulse || return 1
	va=$(nm known | awk '$3 == "known_alpha_leaf" {print $1}')
	va=$(printf '%x' $(( 0x$va + 4 )))
	grep -Eq "^[[:space:]]+$va known_alpha_leaf\+0x4 \($WORK/known\)$" out ||
		die "no $va known_alpha_leaf+0x4 line: $(grep -m3 known_alpha_leaf out)" ||
		return 1
	case $(addr2line -e known "0x$va") in
	*known.c:[0-9]*) ;;
	*) die "addr2line 0x$va: $(addr2line -e known "0x$va")"; return 1 ;;
	esac
}

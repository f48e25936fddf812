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

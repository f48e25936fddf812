# report / flame / export: symbolization against an ELF built here with
# known functions, a kallsyms sidecar, a missing module file, the truncated
# marker and the pid filter; plus sanity on a synthetic profile.

# build_known: compile known.c as a non-PIE executable (file offsets differ
# from virtual addresses) and write known.txt, a dump-format spool:
#   7 samples gamma->beta->alpha (pid 100), 3 samples gamma->beta (pid 100),
#   2 samples in a missing library under a truncated root (pid 200),
#   4 samples gamma->beta + kernel frame (pid 200).
build_known() {
	local here load off vaddr filesz a b g rel
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	$CC -O0 -g -no-pie -fno-pie -o known "$here/known.c" || return 1
	# the executable PT_LOAD (flags contain E), independently via readelf
	load=$(readelf -lW known | awk '$1 == "LOAD" && / R?W?E / {print $2, $3, $5; exit}')
	read -r off vaddr filesz <<<"$load"
	[ -n "$filesz" ] || die "no executable PT_LOAD in: $(readelf -lW known)" ||
		return 1
	[ "$((off))" -ne "$((vaddr))" ] || die "offset == vaddr, test is weak" ||
		return 1
	sym() { nm known | awk -v s="$1" '$3 == s {print "0x" $1}'; }
	# file offset of (symbol + 4): inside the function, not at its start
	rel() { printf '0x%x' $(( $(sym "$1") + 4 - vaddr + off )); }
	a=$(rel known_alpha_leaf) b=$(rel known_beta_mid) g=$(rel known_gamma_root)
	# mapped at a load address unrelated to the ELF vaddr
	cat >known.txt <<EOT
# header start_us=1000000 interval_us=1000
module id=0 pid=100 start=0x7f0000000000 end=$(printf '0x%x' $((0x7f0000000000 + filesz))) file_offset=$(printf '0x%x' $((off))) path=$WORK/known build_id=
module id=1 pid=200 start=0x7e0000000000 end=0x7e0000010000 file_offset=0x0 path=/nonexistent/libgone.so build_id=
thread id=0 pid=100 tid=100 comm=known
thread id=1 pid=200 tid=201 comm=other
frame id=0 kind=module module=0 rel=$g
frame id=1 kind=module module=0 rel=$b
frame id=2 kind=module module=0 rel=$a
frame id=3 kind=truncated
frame id=4 kind=module module=1 rel=0x1234
frame id=5 kind=kernel addr=0xffffffff81000123
stack id=0 parent=root frame=0
stack id=1 parent=0 frame=1
stack id=2 parent=1 frame=2
stack id=3 parent=root frame=3
stack id=4 parent=3 frame=4
stack id=5 parent=1 frame=5
EOT
	local i t=0
	for i in 1 2 3 4 5 6 7; do echo "sample dt_ns=1000 thread=0 stack=2"; done >>known.txt
	for i in 1 2 3; do echo "sample dt_ns=1000 thread=0 stack=1"; done >>known.txt
	for i in 1 2; do echo "sample dt_ns=1000 thread=1 stack=4"; done >>known.txt
	for i in 1 2 3 4; do echo "sample dt_ns=1000 thread=1 stack=5"; done >>known.txt
	"$SPOOLGEN" <known.txt >known.spulse || return 1
	printf 'ffffffff81000000 T _stext\nffffffff81000100 T known_kernel_fn\nffffffff81000200 t other_kernel_fn\n' \
		>known.spulse.kallsyms
	"$SP" check known.spulse >/dev/null || die "hand-written spool invalid"
}

# row NAME: "self total" of NAME's report row (from out)
row() {
	awk -v n="$1" '$5 == n {print $2, $4}' out
}

test_report_names_elf_functions() {
	build_known || return 1
	expect_rc 0 "$SP" report known.spulse --top 0 || return 1
	[ "$(row known_alpha_leaf)" = "7 7" ] || die "alpha: $(row known_alpha_leaf)" || return 1
	[ "$(row known_beta_mid)" = "3 14" ] || die "beta: $(row known_beta_mid)" || return 1
	[ "$(row known_gamma_root)" = "0 14" ] || die "gamma: $(row known_gamma_root)" || return 1
	[ "$(row known_kernel_fn)" = "4 4" ] || die "kernel: $(row known_kernel_fn)" || return 1
	[ "$(row '[truncated]')" = "0 2" ] || die "truncated: $(row '[truncated]')" || return 1
	grep -q '0x1234 \[/nonexistent/libgone.so\]' out ||
		die "missing module not shown as hex with its path" || return 1
	grep -q '43.75%.*known_alpha_leaf' out || die "alpha is not 7/16" || return 1
	grep -q "known_alpha_leaf \[$WORK/known\]" out || die "no module column" ||
		return 1
	# sorted by self: alpha (7) first, then kernel (4)
	[ "$(awk 'NR == 3 {print $5}' out)" = known_alpha_leaf ] ||
		die "first row is not alpha" || return 1
	expect_rc 0 "$SP" report known.spulse --by total --top 2 || return 1
	[ "$(awk 'NR > 2' out | wc -l)" -eq 2 ] || die "--top 2 printed more" ||
		return 1
	awk 'NR > 2 {print $5}' out | grep -q known_gamma_root ||
		die "--by total does not put gamma first"
}

test_report_kallsyms_option_and_absence() {
	build_known || return 1
	mv known.spulse.kallsyms other.kallsyms
	expect_rc 0 "$SP" report known.spulse --top 0 || return 1
	grep -q '0xffffffff81000123' out || die "no kallsyms: kernel not hex" ||
		return 1
	! grep -q known_kernel_fn out || die "resolved without kallsyms" ||
		return 1
	expect_rc 0 "$SP" report known.spulse --top 0 --kallsyms other.kallsyms ||
		return 1
	[ "$(row known_kernel_fn)" = "4 4" ] || die "--kallsyms ignored" || return 1
	expect_rc 0 "$SP" report known.spulse --kallsyms /nonexistent/kallsyms ||
		return 1
	grep -q known_alpha_leaf out || die "user symbols lost"
}

test_report_pid_filter() {
	build_known || return 1
	expect_rc 0 "$SP" report known.spulse --pid 200 --top 0 || return 1
	grep -q '^# .*: 6 samples of pid 200' out || die "$(head -1 out)" || return 1
	[ "$(row known_kernel_fn)" = "4 4" ] || return 1
	[ "$(row known_beta_mid)" = "0 4" ] || die "beta: $(row known_beta_mid)" ||
		return 1
	! grep -q known_alpha_leaf out || die "pid 100 samples leaked"
}

test_flame_folded_exact() {
	build_known || return 1
	expect_rc 0 "$SP" flame --folded known.spulse || return 1
	sort out >got
	sort >want <<EOT
known_gamma_root;known_beta_mid;known_alpha_leaf 7
known_gamma_root;known_beta_mid 3
known_gamma_root;known_beta_mid;known_kernel_fn 4
[truncated];0x1234 [/nonexistent/libgone.so] 2
EOT
	diff want got || die "folded stacks differ" || return 1
	expect_rc 0 "$SP" export known.spulse --format folded || return 1
	sort out | diff want - || die "export folded differs from flame --folded"
}

test_flame_svg() {
	build_known || return 1
	expect_rc 0 "$SP" flame known.spulse -o f.svg --title "known <test>" ||
		return 1
	head -c 5 f.svg | grep -q '<?xml' || die "not XML" || return 1
	grep -q '<svg ' f.svg && tail -n 1 f.svg | grep -q '</svg>' ||
		die "no svg element" || return 1
	[ "$(grep -c '<script' f.svg)" -eq 1 ] || die "not one script" || return 1
	grep -q 'known &lt;test&gt;' f.svg || die "title not escaped" || return 1
	grep -q '<title>known_alpha_leaf (7 samples, 43.75%)</title>' f.svg ||
		die "no alpha box with its count" || return 1
	grep -q '<title>all (16 samples, 100.00%)</title>' f.svg ||
		die "no root box" || return 1
	# every <g> closes
	[ "$(grep -o '<g[ >]' f.svg | wc -l)" -eq "$(grep -o '</g>' f.svg | wc -l)" ] ||
		die "unbalanced <g>"
}

# (export --format json: test_export_viewers.sh, which owns that format)
test_export_perf_script_names_frames() {
	build_known || return 1
	expect_rc 0 "$SP" export known.spulse --format perf-script -o ps.txt ||
		return 1
	[ "$(grep -c 'cpu-clock:$' ps.txt)" -eq 16 ] || die "perf-script events" ||
		return 1
	grep -q "known_alpha_leaf+0x4 ($WORK/known)" ps.txt ||
		die "no sym+off (dso) frame: $(sed -n 2p ps.txt)" || return 1
	grep -q 'known_kernel_fn+0x23 (\[kernel.kallsyms\])' ps.txt ||
		die "kernel frame offset wrong"
}

test_report_flame_on_synth_are_consistent() {
	local samples sum
	"$SP" synth -q -o s.spulse --samples 20000 --kallsyms || return 1
	samples=$(json_field samples "$("$SP" check --json s.spulse)")
	expect_rc 0 "$SP" report s.spulse --top 0 || return 1
	sum=$(awk 'NR > 2 {s += $2} END {print s}' out)
	[ "$sum" -eq "$samples" ] || die "self sums to $sum of $samples" || return 1
	awk 'NR > 2 && $4 > '"$samples"' {exit 1}' out || die "total > samples" ||
		return 1
	grep -q 'vfs_read\|pipe_write\|schedule' out ||
		die "synthetic kernel functions not named via FILE.kallsyms" ||
		return 1
	expect_rc 0 "$SP" flame --folded s.spulse || return 1
	sum=$(awk '{s += $NF} END {print s}' out)
	[ "$sum" -eq "$samples" ] || die "folded counts sum to $sum" || return 1
	grep -q '^0x1007 \[/synth/usr/bin/[^;]*;0x104e ' out ||
		die "stacks do not start at _start;main" || return 1
	expect_rc 0 "$SP" flame s.spulse -o s.svg || return 1
	grep -q "<title>all ($samples samples" s.svg || die "svg root count"
}

test_report_stripped_shared_library_uses_dynsym() {
	local here load off vaddr a
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	$CC -O1 -shared -fPIC -o libknown.so "$here/known.c" || return 1
	strip --strip-all libknown.so || return 1
	! readelf -SW libknown.so | grep -q ' .symtab ' ||
		die "strip left .symtab" || return 1
	load=$(readelf -lW libknown.so | awk '$1 == "LOAD" && / R?W?E / {print $2, $3; exit}')
	read -r off vaddr <<<"$load"
	a=$(readelf -sW --dyn-syms libknown.so |
		awk '$8 == "known_beta_mid" {print "0x" $2; exit}')
	[ -n "$a" ] || die "known_beta_mid not in .dynsym" || return 1
	cat >lib.txt <<EOT
# header start_us=5 interval_us=0
module id=0 pid=7 start=0x7f0000001000 end=0x7f0000100000 file_offset=$off path=$WORK/libknown.so build_id=
thread id=0 pid=7 tid=7 comm=x
frame id=0 kind=module module=0 rel=$(printf '0x%x' $((a + 2 - vaddr + off)))
stack id=0 parent=root frame=0
sample dt_ns=1 thread=0 stack=0
EOT
	"$SPOOLGEN" <lib.txt >lib.spulse || return 1
	expect_rc 0 "$SP" report lib.spulse || return 1
	[ "$(row known_beta_mid)" = "1 1" ] || die "$(cat out)"
}

test_report_symfs_finds_moved_files() {
	build_known || return 1
	sed "s|path=$WORK/known |path=/opt/spulse-test/known |" known.txt >moved.txt
	"$SPOOLGEN" <moved.txt >moved.spulse || return 1
	expect_rc 0 "$SP" report moved.spulse --top 0 || return 1
	! grep -q known_alpha_leaf out || die "resolved a file that is absent" ||
		return 1
	grep -q '\[/opt/spulse-test/known\]' out || die "no hex fallback" ||
		return 1
	mkdir -p sym/opt/spulse-test && cp known sym/opt/spulse-test/ || return 1
	expect_rc 0 "$SP" report moved.spulse --top 0 --symfs "$WORK/sym" ||
		return 1
	[ "$(row known_alpha_leaf)" = "7 7" ] || die "--symfs ignored" || return 1
	expect_rc 0 "$SP" flame --folded moved.spulse --symfs sym || return 1
	grep -q '^known_gamma_root;known_beta_mid;known_alpha_leaf 7$' out ||
		die "flame --symfs"
}

#!/bin/bash
# same_bytes.sh OLD-DRAIN NEW-DRAIN GEN_FAKE [WORKDIR]: drain the same
# gen_fake inputs with two spulse-drain binaries in the three write paths
# (merged: the grouped release; merge-ordered: SPULSE_DRAIN_MERGE_ORDER=1;
# flight: --flight with dumps) and compare every output file with cmp.
# SPULSE_RECORDING_ID is fixed so the spools can be byte-identical.
# Prints one line per difference and a summary; exit 1 if any differ.
old=$1 new=$2 gen=$3 work=${4:-$(mktemp -d "${TMPDIR:-/tmp}/same-bytes.XXXXXX")}
[ -x "$old" ] && [ -x "$new" ] && [ -x "$gen" ] || {
	echo "usage: same_bytes.sh OLD-DRAIN NEW-DRAIN GEN_FAKE [WORKDIR]" >&2
	exit 2
}
export SPULSE_RECORDING_ID=0123456789abcdef0123456789abcdef
configs=(
	"--cpus 4 --idle 1 --samples 3000 --seed 11"
	"--cpus 4 --samples 20000 --seed 13"
	"--cpus 2 --samples 4000 --seed 31 --stacks 40"
	"--cpus 16 --idle 3 --samples 2000 --seed 5"
	"--cpus 3 --samples 500 --seed 4 --cut-cpu 1 --offcpu 50"
	"--cpus 3 --samples 500 --seed 5 --cut-cpu 2 --cut-in-interval --offcpu 50"
	"--cpus 3 --samples 500 --seed 9 --corrupt-cpu 2 --offcpu 50"
	"--cpus 3 --idle 1 --samples 2000 --seed 21 --offcpu 100 --manual-at 700"
	"--cpus 3 --idle 1 --samples 2000 --seed 21 --offcpu 100 --manual-at 700 --epoch-ids 50"
	"--cpus 3 --samples 500 --seed 9 --corrupt-cpu 2 --offcpu 50 --epoch-ids 40"
	"--cpus 3 --samples 20000 --seed 15 --offcpu 1000 --manual-at 12000 --epoch-ids 300"
	"--cpus 2 --samples 300 --seed 6"
	"--cpus 3 --samples 20000 --seed 15"
	"--cpus 2 --samples 6000 --seed 51 --offcpu 300 --manual-at 3000"
	"--cpus 2 --samples 12000 --seed 52 --exec-module"
	"--cpus 8 --samples 5000 --seed 5 --offcpu 200 --manual-at 900"
	"--cpus 4 --idle 1 --samples 4000 --seed 21 --offcpu 400 --unknown-ext"
	"--cpus 4 --idle 1 --samples 4000 --seed 22 --offcpu 400"
	"--cpus 3 --samples 800 --seed 23 --offcpu 80 --no-cpu-record"
	"--cpus 4 --samples 30000 --seed 31 --offcpu 1500 --manual-at 20000"
	"--cpus 2 --samples 30000 --seed 32 --offcpu 500 --stall 9000:40"
	"--cpus 3 --samples 8000 --seed 33 --offcpu 300 --manual-at 5000"
	"--cpus 2 --samples 20000 --seed 1 --stacks 30"
	"--cpus 2 --samples 20000 --seed 2 --stacks 2000"
	"--cpus 4 --samples 10000 --seed 3 --stacks 500 --offcpu 2000"
	"--cpus 2 --samples 10000 --seed 4 --stacks 5000 --epoch-ids 1000"
	"--cpus 2 --samples 10000 --seed 5 --offcpu 5000 --epoch-ids 2000"
	"--cpus 1 --samples 20000 --seed 6 --offcpu 10000"
	"--cpus 2 --samples 10000 --seed 7 --stacks 3 --offcpu 3000"
	"--cpus 4 --idle 2 --samples 8000 --seed 8 --stacks 100 --exec-module --offcpu 500"
	"--cpus 2 --samples 15000 --seed 9 --depth 30"
	"--cpus 2 --samples 15000 --seed 10 --depth 40 --stacks 4000"
	"--cpus 3 --samples 10000 --seed 11 --depth 25 --offcpu 3000 --modules 60"
	"--cpus 2 --samples 10000 --seed 12 --modules 200 --stacks 3000"
	"--cpus 2 --samples 10000 --seed 13 --depth 20 --modules 50 --epoch-ids 500"
	"--cpus 2 --samples 8000 --seed 14 --depth 30 --modules 80 --offcpu 4000 --exec-module"
	"--cpus 5 --idle 1 --samples 6000 --seed 15 --depth 16 --stacks 10000 --offcpu 600 --manual-at 3000"
	"--cpus 2 --samples 1 --seed 16"
	"--cpus 2 --samples 20000 --seed 17 --depth 28 --modules 40 --offcpu 20000"
	"--cpus 1 --samples 5000 --seed 18 --depth 60 --modules 100"
)
modes=(merged order flight)
ndiff=0 nrun=0
for i in "${!configs[@]}"; do
	d=$work/c$i
	rm -rf "$d"
	mkdir -p "$d/spulse"
	# shellcheck disable=SC2086
	if ! "$gen" --dir "$d/spulse" --truth "$d/truth" ${configs[$i]} 2>"$d/gen.err"; then
		echo "SKIP config $i (gen_fake refuses: ${configs[$i]})"
		continue
	fi
	for m in "${modes[@]}"; do
		for v in old new; do
			bin=$old
			[ $v = new ] && bin=$new
			o=$d/$m-$v
			mkdir -p "$o"
			args=(--debugfs "$d/spulse" -o "$o/out.spulse" --once --no-kallsyms)
			env=()
			case $m in
			order) env=(SPULSE_DRAIN_MERGE_ORDER=1) ;;
			flight) args+=(--flight 8 --post 2 --gen-bytes 200000) ;;
			esac
			env "${env[@]}" "$bin" "${args[@]}" 2>"$o/err" >/dev/null
			echo "rc $?" >"$o/rc"
			# the messages name the output path; times vary
			sed -i -e "s|$o/||g" -e 's/in [0-9.]* s\b//' "$o/err"
		done
		nrun=$((nrun + 1))
		if ! diff -r -q "$d/$m-old" "$d/$m-new" >/dev/null; then
			echo "DIFF config $i mode $m: ${configs[$i]}"
			diff -r -q "$d/$m-old" "$d/$m-new" | head -5
			ndiff=$((ndiff + 1))
		fi
	done
done
echo "same_bytes: $nrun runs (${#configs[@]} configs x ${#modes[@]} modes), $ndiff differ"
[ $ndiff -eq 0 ]

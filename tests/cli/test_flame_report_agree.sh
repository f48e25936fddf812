# flame and report agree on every function's total (issue 22, item 4):
# tests/cli/flame_report_agree.py compares `spulse report --json` (self and
# total per function) with `spulse flame --folded` (the lines ending in a
# function; the lines holding it, once per line). Here on build_known's
# spool (test_report.sh) and on one with recursion, a [truncated] root and
# a thread-start root beside `main`; the first-sample suite runs the same
# check on a recording of the demo workload (gt). A doctored folded output
# must fail it.

agree() {
	python3 "$(dirname "${BASH_SOURCE[0]}")/flame_report_agree.py" "$@"
}

# build_recursive: recursive.spulse over build_known's binary: gamma calls
# beta calls gamma again (recursion: one line holds gamma twice), samples
# under a [truncated] root, kernel leaves, a second root (alpha alone).
build_recursive() {
	build_known || return 1
	local off vaddr a b g
	read -r off vaddr _ <<<"$(readelf -lW known | awk '$1 == "LOAD" && / R?W?E / {print $2, $3, $5; exit}')"
	sym() { nm known | awk -v s="$1" '$3 == s {print "0x" $1}'; }
	rel() { printf '0x%x' $(( $(sym "$1") + 4 - vaddr + off )); }
	a=$(rel known_alpha_leaf) b=$(rel known_beta_mid) g=$(rel known_gamma_root)
	grep -E '^(# header|module|thread)' known.txt >recursive.txt
	cat >>recursive.txt <<EOT
frame id=0 kind=module module=0 rel=$g
frame id=1 kind=module module=0 rel=$b
frame id=2 kind=module module=0 rel=$a
frame id=3 kind=truncated
frame id=4 kind=kernel addr=0xffffffff81000123
stack id=0 parent=root frame=0
stack id=1 parent=0 frame=1
stack id=2 parent=1 frame=0
stack id=3 parent=2 frame=1
stack id=4 parent=3 frame=2
stack id=5 parent=root frame=3
stack id=6 parent=5 frame=1
stack id=7 parent=6 frame=2
stack id=8 parent=4 frame=4
stack id=9 parent=root frame=2
EOT
	local s n
	for s in 0:2 1:3 2:1 3:4 4:5 5:1 6:2 7:3 8:2 9:2; do
		for ((n = 0; n < ${s#*:}; n++)); do
			echo "sample dt_ns=1000 thread=0 stack=${s%:*}"
		done
	done >>recursive.txt
	"$SPOOLGEN" <recursive.txt >recursive.spulse || return 1
	cp known.spulse.kallsyms recursive.spulse.kallsyms
	"$SP" check recursive.spulse >/dev/null || die "hand-written spool invalid"
}

test_flame_report_agree_on_known() {
	build_known || return 1
	expect_rc 0 agree "$SP" known.spulse || return 1
	grep -q '^agree: 6 functions, 16 samples' out || die "$(cat out)"
}

test_flame_report_agree_with_recursion_and_roots() {
	build_recursive || return 1
	expect_rc 0 agree "$SP" recursive.spulse || return 1
	grep -q '^agree: .* 25 samples' out || die "$(cat out)" || return 1
	# the recursion is really there: gamma's total counts each line once
	"$SP" flame recursive.spulse --folded >f 2>/dev/null || return 1
	grep -q 'known_gamma_root;known_beta_mid;known_gamma_root;' f ||
		die "no recursive line: $(cat f)" || return 1
	"$SP" report recursive.spulse --json --top 0 >r.json 2>/dev/null || return 1
	python3 -c 'import json, sys
r = {x["function"]: x for x in json.load(open("r.json"))["rows"]}
g = r["known_gamma_root"]
assert (g["self"], g["total"]) == (3, 17), g' || die "gamma's report row"
}

test_flame_report_agree_fails_on_doctored_folded() {
	build_recursive || return 1
	"$SP" flame recursive.spulse --folded >f 2>/dev/null || return 1
	expect_rc 0 agree "$SP" recursive.spulse --folded f || return 1
	# one sample moved from one line to another: the sum is unchanged
	awk 'NR == 1 {$NF = $NF + 1} NR == 2 {$NF = $NF - 1} {print}' f >moved
	cmp -s f moved && die "doctoring did nothing" && return 1
	expect_rc 1 agree "$SP" recursive.spulse --folded moved || return 1
	grep -q '^DISAGREE ' out || die "no disagreement named: $(cat out)" || return 1
	# a line dropped
	sed 1d f >dropped
	expect_rc 1 agree "$SP" recursive.spulse --folded dropped || return 1
	grep -q '^DISAGREE samples: folded' out || die "$(cat out)" || return 1
	# a function renamed on one line
	sed '0,/known_alpha_leaf/s//known_alpha_lief/' f >renamed
	expect_rc 1 agree "$SP" recursive.spulse --folded renamed || return 1
	grep -q 'known_alpha_lief: in the folded output' out || die "$(cat out)" || return 1
	# not folded at all: an error, not agreement
	echo 'not folded' >junk
	expect_rc 2 agree "$SP" recursive.spulse --folded junk
}

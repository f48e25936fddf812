# spulse merge (docs/FLEET.md "Merge"): the merged spool validates, its
# per-host reports equal each input's own report, merges nest, times are on
# one axis, recovered inputs are reported and corrupt ones leave no output.

# three "hosts": synthetic spools without identities (host = file name)
merge_inputs() {
	"$SP" synth -q -o web1.spulse --samples 3000 --threads 4 --seed 1 \
		--cpus 2 --off-cpu 40 --triggers 2 || return 1
	"$SP" synth -q -o web2.spulse --samples 2000 --threads 7 --seed 2 \
		--off-cpu 25 || return 1
	"$SP" synth -q -o db1.spulse --samples 1500 --threads 3 --seed 3 \
		--triggers 1 || return 1
}

# check_count FILE FIELD: FIELD of spulse check --json FILE
check_count() {
	json_field "$2" "$("$SP" check --json "$1")"
}

# same_report A B [ARGS]: report --json of A equals report --host of B
same_report() {
	local in=$1 merged=$2 host
	shift 2
	host=$(basename "$in" .spulse)
	"$SP" report --json "$@" "$in" >want.json 2>/dev/null ||
		die "report $in" || return 1
	"$SP" report --json --host "$host" "$@" "$merged" >got.json \
		2>/dev/null || die "report --host $host $merged" || return 1
	cmp -s want.json got.json ||
		die "report $* --host $host of $merged differs from $in's" ||
		return 1
}

test_merge_output_validates_and_keeps_every_record() {
	local f s=0 o=0 t=0
	merge_inputs || return 1
	expect_rc 0 "$SP" merge -o all.spulse web1.spulse web2.spulse db1.spulse ||
		return 1
	grep -q '^all.spulse: 3 inputs, 3 sources, 6500 samples' out ||
		die "summary: $(cat out)" || return 1
	expect_rc 0 "$SP" check all.spulse || return 1
	for f in web1 web2 db1; do
		s=$((s + $(check_count $f.spulse samples)))
		o=$((o + $(check_count $f.spulse offcpu)))
		t=$((t + $(check_count $f.spulse triggers)))
	done
	[ "$(check_count all.spulse samples)" -eq $s ] || die "samples" || return 1
	[ "$(check_count all.spulse offcpu)" -eq $o ] || die "offcpu" || return 1
	[ "$(check_count all.spulse triggers)" -eq $t ] || die "triggers" ||
		return 1
	[ $o -gt 0 ] && [ $t -gt 0 ] || die "inputs lack intervals/triggers"
}

test_merge_per_host_report_equals_each_input_report() {
	local f
	merge_inputs || return 1
	"$SP" merge -q -o all.spulse web1.spulse web2.spulse db1.spulse ||
		return 1
	for f in web1 web2 db1; do
		same_report $f.spulse all.spulse || return 1
		same_report $f.spulse all.spulse --sort comm,pid,tid,sym ||
			return 1
		same_report $f.spulse all.spulse --by total || return 1
	done
}

test_merge_per_host_off_cpu_report_equals_each_input_report() {
	local f
	merge_inputs || return 1
	"$SP" merge -q -o all.spulse web1.spulse web2.spulse db1.spulse ||
		return 1
	for f in web1 web2; do
		same_report $f.spulse all.spulse --off-cpu || return 1
	done
}

test_merge_sort_host_counts_each_input_samples() {
	merge_inputs || return 1
	"$SP" merge -q -o all.spulse web1.spulse web2.spulse db1.spulse ||
		return 1
	"$SP" report --sort host all.spulse >rep 2>/dev/null || return 1
	grep -Eq '^ +[0-9.]+% +3000 .* web1$' rep || die "web1 row: $(cat rep)" ||
		return 1
	grep -Eq '^ +[0-9.]+% +2000 .* web2$' rep || die "web2 row" || return 1
	grep -Eq '^ +[0-9.]+% +1500 .* db1$' rep || die "db1 row" || return 1
}

test_merge_of_a_merged_spool_keeps_every_host() {
	local f
	merge_inputs || return 1
	"$SP" merge -q -o ab.spulse web1.spulse web2.spulse || return 1
	expect_rc 0 "$SP" merge -o abc.spulse ab.spulse db1.spulse || return 1
	grep -q '2 inputs, 3 sources, 6500 samples' out ||
		die "summary: $(cat out)" || return 1
	expect_rc 0 "$SP" check abc.spulse || return 1
	for f in web1 web2 db1; do
		same_report $f.spulse abc.spulse || return 1
	done
	# the first merge's host names survive, "ab" is no host
	"$SP" report --json --host ab abc.spulse >j 2>/dev/null
	[ "$(json_field total "$(cat j)")" = 0 ] ||
		die "host ab has samples: $(head -c 300 j)"
}

# Two hand-made spools whose starts differ by 1 s: the merged axis starts at
# the earlier one and the later spool's samples move by 1e9 ns.
test_merge_shifts_times_onto_the_earliest_start() {
	"$SPOOLGEN" >early.spulse <<'EOF' || return 1
header start_us=1000000 interval_us=1000
frame id=0 kind=user addr=4096
stack id=0 parent=root frame=0
thread id=0 pid=1 tid=1 comm=early
sample t=100 thread=0 stack=0
sample t=1500000000 thread=0 stack=0
EOF
	"$SPOOLGEN" >late.spulse <<'EOF' || return 1
header start_us=2000000 interval_us=1000
frame id=0 kind=user addr=8192
stack id=0 parent=root frame=0
thread id=0 pid=2 tid=2 comm=late
sample t=200 thread=0 stack=0
EOF
	"$SP" merge -q -o m.spulse late.spulse early.spulse || return 1
	[ "$(check_count m.spulse start_us)" = 1000000 ] ||
		die "start_us $(check_count m.spulse start_us)" || return 1
	"$SP" dump m.spulse | awk '/^sample/ {
		for (i = 1; i <= NF; i++) if ($i ~ /^time_ns=/) {
			sub("time_ns=", "", $i); print $i } }' >times
	printf '100\n1000000200\n1500000000\n' | cmp -s - times ||
		die "times: $(tr '\n' ' ' <times)"
}

test_merge_samples_are_in_time_order() {
	merge_inputs || return 1
	"$SP" merge -q -o all.spulse web1.spulse web2.spulse db1.spulse ||
		return 1
	"$SP" dump all.spulse | awk '/^sample/ {
		for (i = 1; i <= NF; i++) if ($i ~ /^time_ns=/) {
			sub("time_ns=", "", $i)
			if ($i + 0 < last) { print "back at " NR; exit 1 }
			last = $i + 0; n++ } }
		END { if (n != 6500) { print n " samples"; exit 1 } }' ||
		die "samples out of order"
}

test_merge_recovered_input_is_reported_and_kept() {
	local size
	merge_inputs || return 1
	size=$(stat -c %s db1.spulse)
	head -c $((size - 3)) db1.spulse >cut.spulse
	"$SP" check --json cut.spulse >c || return 1
	grep -q '"recovered":true' c || die "not a recovered cut" || return 1
	expect_rc 0 "$SP" merge -o m.spulse web1.spulse cut.spulse || return 1
	grep -Eq '^cut.spulse: recovered, [1-9][0-9]* bytes of a cut record ignored$' err ||
		die "stderr: $(cat err)" || return 1
	"$SP" check m.spulse >/dev/null 2>&1 || die "merged spool invalid" ||
		return 1
	same_report cut.spulse m.spulse
}

test_merge_corrupt_input_is_an_error_with_offset_and_no_output() {
	local off
	merge_inputs || return 1
	cp db1.spulse bad.spulse
	# the first record's tag becomes an unknown tag
	off=$(record_offsets bad.spulse | head -n 1)
	patch_byte bad.spulse "$off" ff
	expect_rc 1 "$SP" merge -o m.spulse web1.spulse bad.spulse || return 1
	grep -q "bad.spulse: offset $off: unknown record tag" err ||
		die "stderr: $(cat err)" || return 1
	[ ! -e m.spulse ] || die "output left behind" || return 1
	[ -z "$(ls -A | grep '^\.m\.spulse')" ] || die "temp file left behind"
}

test_merge_failure_keeps_an_existing_output() {
	merge_inputs || return 1
	"$SP" merge -q -o m.spulse web1.spulse || return 1
	cp m.spulse before.spulse
	printf 'SPULSE3\0\x01' >bad.spulse
	printf '\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff' >>bad.spulse
	expect_rc 1 "$SP" merge -o m.spulse web2.spulse bad.spulse || return 1
	cmp -s m.spulse before.spulse || die "existing output changed"
}

test_merge_usage_errors() {
	merge_inputs || return 1
	expect_rc 2 "$SP" merge web1.spulse || return 1
	grep -q -- '-o OUT is required' err || die "no -o message" || return 1
	expect_rc 2 "$SP" merge -o m.spulse || return 1
	grep -q 'no input spools' err || die "no input message" || return 1
	expect_rc 1 "$SP" merge -o m.spulse missing.spulse || return 1
	[ ! -e m.spulse ] || die "output for a missing input"
}

test_merge_identity_of_an_input_without_one_is_its_file_name() {
	merge_inputs || return 1
	mkdir -p sub
	cp web2.spulse sub/edge-7.spulse
	"$SP" merge -q -o m.spulse sub/edge-7.spulse || return 1
	"$SP" report --sort host m.spulse >rep 2>/dev/null || return 1
	grep -Eq ' edge-7$' rep || die "host: $(cat rep)"
}

# A spool with its own identity (as the drainer writes it): merge keeps the
# host, recording id, start, kernel, machine-id and boot-id; nesting keeps
# the sources' recording ids; check --json lists them.
test_merge_keeps_identities_and_recording_ids() {
	local id hexid
	hexid=00112233445566778899aabbccddeeff
	# payload: source 0, id, start_us 1000000 (c0 84 3d), host "edge", ...
	id="00${hexid}c0843d04656467650331323302623006362e312e3130"
	"$SPOOLGEN" >own.spulse <<EOF2 || return 1
header start_us=1000000 interval_us=1000
ext kind=4 len=$(( ${#id} / 2 )) hex=$id
frame id=0 kind=user addr=4096
stack id=0 parent=root frame=0
thread id=0 pid=1 tid=1 comm=a
sample t=5 thread=0 stack=0
EOF2
	"$SP" check --json own.spulse >j || die "own.spulse: $(cat j)" || return 1
	grep -q "\"sources\":\[{\"source\":0,\"host\":\"edge\",\"recording_id\":\"$hexid\",\"start_us\":1000000,\"machine_id\":\"123\",\"boot_id\":\"b0\",\"kernel\":\"6.1.10\"}\]" j ||
		die "identity: $(cat j)" || return 1
	"$SP" synth -q -o web1.spulse --samples 100 --seed 1 || return 1
	"$SP" merge -q -o m1.spulse web1.spulse own.spulse || return 1
	"$SP" merge -q -o m2.spulse own.spulse m1.spulse || return 1
	"$SP" check --json m2.spulse >j || return 1
	[ "$(json_field identities "$(cat j)")" = 3 ] || die "$(cat j)" ||
		return 1
	grep -o '"host":"[^"]*","recording_id":"[^"]*"' j >ids
	[ "$(sed -n 1p ids)" = "\"host\":\"edge\",\"recording_id\":\"$hexid\"" ] &&
	[ "$(sed -n 3p ids)" = "\"host\":\"edge\",\"recording_id\":\"$hexid\"" ] &&
	grep -q '"host":"web1"' ids || die "sources: $(cat ids)" || return 1
	"$SP" dump m2.spulse | grep -c '^thread-source ' >n
	[ "$(cat n)" -ge 1 ] || die "no thread-source records"
}

# OUT.kallsyms: a copy when every input has the same kernel symbol file
# (kernel frames then symbolize as in each input's report); when they
# differ (several boots), each table once with the frame ids it names, so
# each host's kernel frames keep their own names; an input without one is
# named on stderr; with none at all, no OUT.kallsyms (a stale one removed).
test_merge_copies_identical_kallsyms_only() {
	local f
	for f in 1 2; do
		"$SP" synth -q -o k$f.spulse --samples 800 --seed $f --kallsyms ||
			return 1
	done
	expect_rc 0 "$SP" merge -o m.spulse k1.spulse k2.spulse || return 1
	cmp -s m.spulse.kallsyms k1.spulse.kallsyms || die "no copy" || return 1
	same_report k1.spulse m.spulse || return 1
	grep -q '\[kernel.kallsyms\]' want.json || die "no kernel symbols" ||
		return 1
	rm k1.spulse.kallsyms k2.spulse.kallsyms
	expect_rc 0 "$SP" merge -o m.spulse k1.spulse k2.spulse || return 1
	[ ! -e m.spulse.kallsyms ] || die "stale kallsyms kept"
}

test_merge_keeps_kernel_symbols_of_each_boot() {
	local f
	for f in 1 2 3; do
		"$SP" synth -q -o k$f.spulse --samples 800 --seed $f --kallsyms ||
			return 1
	done
	# boot 2: the same addresses name other functions
	sed 's/ \([tT]\) / \1 boot2_/' k1.spulse.kallsyms >k2.spulse.kallsyms
	expect_rc 0 "$SP" merge -o m.spulse k1.spulse k2.spulse k3.spulse ||
		return 1
	[ ! -s err ] || die "stderr: $(cat err)" || return 1
	head -n 1 m.spulse.kallsyms | grep -q '^#spulse-kallsyms' ||
		die "not the sectioned form" || return 1
	for f in 1 2 3; do
		same_report k$f.spulse m.spulse || return 1
	done
	grep -q '"boot2_' got.json && die "boot 2 names in host k3" || true
	"$SP" report --json --host k2 m.spulse >j2 2>/dev/null || return 1
	grep -q '"boot2_' j2 || die "no boot 2 names: $(head -c 300 j2)" ||
		return 1
	# nested: a merged spool merged again keeps each boot's names
	"$SP" synth -q -o k4.spulse --samples 300 --seed 4 --kallsyms || return 1
	expect_rc 0 "$SP" merge -o n.spulse k4.spulse m.spulse || return 1
	for f in 1 2 3 4; do
		same_report k$f.spulse n.spulse || return 1
	done
	# an input without its sidecar: named once, its frames stay hex
	rm k3.spulse.kallsyms
	expect_rc 0 "$SP" merge -o m.spulse k1.spulse k2.spulse k3.spulse ||
		return 1
	[ "$(grep -c 'k3.spulse has no k3.spulse.kallsyms' err)" = 1 ] ||
		die "stderr: $(cat err)" || return 1
	same_report k1.spulse m.spulse && same_report k2.spulse m.spulse
}

test_merge_refuses_an_output_that_is_an_input() {
	"$SP" synth -q -o a.spulse --samples 200 --seed 1 || return 1
	"$SP" synth -q -o b.spulse --samples 200 --seed 2 || return 1
	cp a.spulse before.spulse
	mkdir -p d
	ln a.spulse d/link.spulse
	expect_rc 2 "$SP" merge -o a.spulse a.spulse || return 1
	grep -q '^spulse merge: output a.spulse is the input a.spulse' err ||
		die "stderr: $(cat err)" || return 1
	[ "$(wc -l <err)" = 1 ] || die "not one line: $(cat err)" || return 1
	expect_rc 2 "$SP" merge -o ./a.spulse b.spulse a.spulse || return 1
	expect_rc 2 "$SP" merge -o d/link.spulse b.spulse a.spulse || return 1
	grep -q 'is the input a.spulse (the same file)' err ||
		die "stderr: $(cat err)" || return 1
	cmp -s a.spulse before.spulse || die "input changed"
}

test_merge_refuses_an_input_shorter_than_a_header() {
	"$SP" synth -q -o a.spulse --samples 200 --seed 1 || return 1
	: >empty.spulse
	expect_rc 1 "$SP" merge -o m.spulse empty.spulse a.spulse || return 1
	grep -q '^spulse merge: empty.spulse: offset 0: ' err ||
		die "stderr: $(cat err)" || return 1
	printf 'SPULSE3\0\001' >short.spulse
	expect_rc 1 "$SP" merge -o m.spulse a.spulse short.spulse || return 1
	grep -q 'short.spulse: offset 9: ' err || die "stderr: $(cat err)" ||
		return 1
	[ ! -e m.spulse ] || die "output written"
}

# Different sample intervals: the format holds one per spool, so merging
# them would give some samples the others' weight (or, as before, a 0 that
# leaves every weight 0): refused, saying why.
test_merge_refuses_mixed_sample_intervals() {
	local us
	for us in 1001 2004; do
		"$SPOOLGEN" >r$us.spulse <<EOF || return 1
header start_us=1000000 interval_us=$us
frame id=0 kind=user addr=4096
stack id=0 parent=root frame=0
thread id=0 pid=1 tid=1 comm=a
sample t=5 thread=0 stack=0
EOF
	done
	expect_rc 1 "$SP" merge -o m.spulse r1001.spulse r2004.spulse || return 1
	grep -q 'r1001.spulse: sampled every 1001 us, r2004.spulse every 2004 us' err ||
		die "stderr: $(cat err)" || return 1
	[ ! -e m.spulse ] || die "output written" || return 1
	cp r1001.spulse s1001.spulse
	expect_rc 0 "$SP" merge -o m.spulse r1001.spulse s1001.spulse || return 1
	[ "$(check_count m.spulse interval_us)" = 1001 ] ||
		die "interval $(check_count m.spulse interval_us)"
}

# Issue 25 item 6: two different identity-less spools with one base name
# and start get different made-up recording ids (and sql two recordings).
test_merge_made_up_recording_ids_differ_by_content() {
	mkdir -p x y
	"$SP" synth -q -o x/edge.spulse --samples 200 --seed 1 || return 1
	"$SP" synth -q -o y/edge.spulse --samples 300 --seed 2 || return 1
	[ "$(check_count x/edge.spulse start_us)" = \
	  "$(check_count y/edge.spulse start_us)" ] ||
		die "starts differ: the test needs equal ones" || return 1
	"$SP" merge -q -o m.spulse x/edge.spulse y/edge.spulse || return 1
	"$SP" check --json m.spulse | grep -o '"recording_id":"[^"]*"' >ids
	[ "$(sort -u ids | wc -l)" = 2 ] || die "ids: $(cat ids)" || return 1
	# spulse sql stores two recordings (before: one)
	if command -v sqlite3 >/dev/null; then
		"$SP" sql o.db m.spulse -q >/dev/null 2>&1 || die "sql" || return 1
		[ "$(sqlite3 o.db 'select count(*) from recordings')" = 2 ] ||
			die "sql recordings: $(sqlite3 o.db 'select * from recordings')" ||
			return 1
	fi
	# the same file merged again keeps its id
	"$SP" merge -q -o m2.spulse x/edge.spulse || return 1
	"$SP" check --json m2.spulse | grep -o '"recording_id":"[^"]*"' >id2
	[ "$(head -n 1 ids)" = "$(cat id2)" ] || die "id not stable"
}

# Issue 25 item 2: identity strings are bytes; merge keeps every one, NUL
# bytes included (a host h"'\<NUL>x, a 64-byte all-NUL machine-id).
test_merge_keeps_identity_strings_byte_exact() {
	local id nul64 hexid=00112233445566778899aabbccddeeff
	nul64=$(printf '00%.0s' $(seq 64))
	# source 0, id, start_us 1000000, host (6 bytes), machine-id (64),
	# boot-id "b0", kernel "6.1\0k"
	id="00${hexid}c0843d066822275c0078""40${nul64}""026230""05362e31006b"
	"$SPOOLGEN" >own.spulse <<EOF2 || return 1
header start_us=1000000 interval_us=1000
ext kind=4 len=$(( ${#id} / 2 )) hex=$id
frame id=0 kind=user addr=4096
stack id=0 parent=root frame=0
thread id=0 pid=1 tid=1 comm=a
sample t=5 thread=0 stack=0
EOF2
	"$SP" check own.spulse >/dev/null 2>&1 || die "own.spulse invalid" ||
		return 1
	expect_rc 0 "$SP" merge -q -o m.spulse own.spulse || return 1
	od -An -tx1 -v m.spulse | tr -d ' \n' >m.hex
	grep -q "$id" m.hex || die "identity bytes changed" || return 1
	# nested, as the second source
	"$SP" synth -q -o web1.spulse --samples 100 --seed 1 || return 1
	expect_rc 0 "$SP" merge -q -o n.spulse web1.spulse m.spulse || return 1
	od -An -tx1 -v n.spulse | tr -d ' \n' >n.hex
	grep -q "01${id#00}" n.hex || die "identity bytes changed when nested"
}

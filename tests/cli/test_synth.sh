# spulse synth: determinism and the shape of the profile; dump/check agree.

test_synth_same_seed_same_bytes() {
	"$SP" synth -q -o a.spulse --samples 3000 --threads 6 --seed 42 &&
	"$SP" synth -q -o b.spulse --samples 3000 --threads 6 --seed 42 ||
		return 1
	cmp a.spulse b.spulse || die "same seed, different bytes"
}

test_synth_different_seed_different_bytes() {
	"$SP" synth -q -o a.spulse --samples 3000 --seed 1 &&
	"$SP" synth -q -o b.spulse --samples 3000 --seed 2 &&
	"$SP" synth -q -o c.spulse --samples 3000 --seed 1 --threads 5 ||
		return 1
	! cmp -s a.spulse b.spulse || die "seeds 1 and 2 gave the same bytes" ||
		return 1
	! cmp -s a.spulse c.spulse || die "--threads changed nothing"
}

test_synth_shape() {
	local n
	"$SP" synth -q -o s.spulse --samples 20000 --threads 8 --depth 12 \
		--seed 3 || return 1
	"$SP" dump s.spulse >d || return 1
	n=$(grep -c '^sample ' d)
	[ "$n" -eq 20000 ] || die "$n samples, wanted 20000" || return 1
	n=$(awk '$1 == "thread" {split($3, a, "="); print a[2]}' d | sort -u | wc -l)
	[ "$n" -ge 3 ] || die "only $n processes" || return 1
	n=$(grep -c '^thread ' d)
	[ "$n" -gt 8 ] || die "$n thread records: no redefinition after exec" ||
		return 1
	grep -q '^module-deactivate ' d || die "no module deactivation" ||
		return 1
	grep -q '^process-deactivate ' d || die "no process deactivation" ||
		return 1
	grep -q '^python .*state=enter' d && grep -q '^python .*state=leave' d ||
		die "no python enter and leave" || return 1
	grep -q '^frame .*kind=kernel' d || die "no kernel frames" || return 1
	grep -q '^frame .*kind=module' d || die "no module frames" || return 1
	# the truncated marker is used, and only as a root
	n=$(awk '$1 == "frame" && $3 == "kind=truncated" {sub("id=", "", $2); print $2}' d)
	[ -n "$n" ] || die "no truncated marker" || return 1
	grep -q "^stack .* parent=root frame=$n " d ||
		die "truncated marker is never a root" || return 1
	! grep -q "^stack .* parent=[0-9]* frame=$n " d ||
		die "truncated marker below the root" || return 1
	# shared prefixes: far fewer stack nodes than sample frames
	n=$(grep -c '^stack ' d)
	[ "$n" -lt 20000 ] || die "$n stack nodes for 20000 samples" || return 1
	# a kernel frame sits on top of a user frame in some stack
	awk '$1 == "frame" {k[$2] = $3}
	     $1 == "stack" {split($3, p, "="); f[$2] = $4; par[$2] = p[2]}
	     END {for (s in par) if (par[s] != "root") {
		      pf = f["id=" par[s]]; sub("frame=", "id=", pf);
		      me = f[s]; sub("frame=", "id=", me);
		      if (k[me] == "kind=kernel" && k[pf] == "kind=module") found = 1 }
		  exit !found}' d || die "no kernel-over-user stack"
}

test_check_counts_match_dump() {
	local json kind field n want
	"$SP" synth -q -o s.spulse --samples 5000 --seed 9 || return 1
	expect_rc 0 "$SP" check --json s.spulse || return 1
	json=$(cat out)
	"$SP" dump s.spulse >d || return 1
	for kind in module:modules frame:frames stack:stacks thread:threads \
		    sample:samples python:python \
		    process-deactivate:process_deactivations \
		    module-deactivate:module_deactivations; do
		field=${kind#*:}
		n=$(grep -c "^${kind%%:*} " d)
		want=$(json_field "$field" "$json") || die "no $field in $json" ||
			return 1
		[ "$n" -eq "$want" ] || die "$field: json $want, dump $n" ||
			return 1
	done
	[ "$(json_field recovered "$json")" = false ] || die "recovered" || return 1
	[ "$(json_field complete_bytes "$json")" -eq "$(stat -c %s s.spulse)" ] ||
		die "complete_bytes != file size" || return 1
	[ "$(json_field start_us "$json")" -gt 0 ] || return 1
	[ "$(json_field interval_us "$json")" -gt 0 ] || return 1
	expect_rc 0 "$SP" check s.spulse || return 1
	grep -q "^samples  *5000$" out || die "text output lacks samples 5000" ||
		return 1
	! grep -q recovered out || die "text output claims recovery"
}

test_check_snapshot_and_replay_agree() {
	local a b
	"$SP" synth -q -o s.spulse --samples 4000 --seed 5 || return 1
	a=$("$SP" check --json --snapshot s.spulse) || return 1
	b=$("$SP" check --json --replay s.spulse) || return 1
	[ "${a/\"snapshot\"/}" = "${b/\"replay\"/}" ] ||
		die "snapshot: $a / replay: $b"
}

test_dump_round_trips_through_spoolgen() {
	"$SP" synth -q -o s.spulse --samples 2000 --threads 7 --seed 11 || return 1
	"$SP" dump s.spulse >d || return 1
	"$SPOOLGEN" <d >back.spulse || return 1
	cmp s.spulse back.spulse || die "dump lost information"
}

test_dump_offsets_are_record_boundaries() {
	local hdr first last size
	"$SP" synth -q -o s.spulse --samples 500 --seed 4 || return 1
	record_offsets s.spulse >offs || return 1
	# header length from the header fields, independently of the reader
	hdr=$((8 + $(uvar_len 1767225600000000) + $(uvar_len 1000)))
	expect_rc 0 "$SP" check --json s.spulse || return 1
	[ "$(json_field start_us "$(cat out)")" = 1767225600000000 ] ||
		die "synth start_us changed; update the test" || return 1
	first=$(head -n 1 offs)
	last=$(tail -n 1 offs)
	size=$(stat -c %s s.spulse)
	[ "$first" -eq "$hdr" ] || die "first record at $first, header is $hdr" ||
		return 1
	[ "$last" -eq "$size" ] || die "end at $last, file is $size" || return 1
	sort -n -c -u offs || die "offsets not strictly increasing"
}

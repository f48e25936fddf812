# report -g caller|callee: perf-style text call graphs on a spool whose
# paths are known: 6 x main;a;leaf, 3 x main;b;leaf, 1 x start;leaf
# (kernel frames named by the sidecar).

build_graph() {
	local i
	cat >g.txt <<'EOT'
# header start_us=1000000 interval_us=1000
thread id=0 pid=10 tid=10 comm=g
frame id=0 kind=kernel addr=0xffffffff81000010
frame id=1 kind=kernel addr=0xffffffff81000110
frame id=2 kind=kernel addr=0xffffffff81000210
frame id=3 kind=kernel addr=0xffffffff81000310
frame id=4 kind=kernel addr=0xffffffff81000410
stack id=0 parent=root frame=0
stack id=1 parent=0 frame=1
stack id=2 parent=1 frame=4
stack id=3 parent=0 frame=2
stack id=4 parent=3 frame=4
stack id=5 parent=root frame=3
stack id=6 parent=5 frame=4
EOT
	for i in 1 2 3 4 5 6; do echo "sample dt_ns=1000 thread=0 stack=2"; done >>g.txt
	for i in 1 2 3; do echo "sample dt_ns=1000 thread=0 stack=4"; done >>g.txt
	echo "sample dt_ns=1000 thread=0 stack=6" >>g.txt
	"$SPOOLGEN" <g.txt >g.spulse || return 1
	printf 'ffffffff81000000 T main\nffffffff81000100 T a\nffffffff81000200 T b\nffffffff81000300 T start\nffffffff81000400 T leaf\n' \
		>g.spulse.kallsyms
}

test_report_callgraph_callee_branches_by_caller() {
	build_graph || return 1
	expect_rc 0 "$SP" report g.spulse -g callee --top 1 || return 1
	cat >want <<'EOT'
 100.00%         10  100.00%         10  leaf [kernel.kallsyms]
            |
            ---leaf
               |
               |--60.00%--a
               |          main
               |
               |--30.00%--b
               |          main
               |
                --10.00%--start

EOT
	tail -n +3 out | diff want - || die "callee graph differs"
}

test_report_callgraph_caller_from_roots() {
	build_graph || return 1
	expect_rc 0 "$SP" report g.spulse --call-graph caller --top 1 || return 1
	cat >want <<'EOT'
 100.00%         10  100.00%         10  leaf [kernel.kallsyms]
            |
            |--90.00%--main
            |          |
            |          |--60.00%--a
            |          |          leaf
            |          |
            |           --30.00%--b
            |                     leaf
            |
             --10.00%--start
                       leaf

EOT
	tail -n +3 out | diff want - || die "caller graph differs"
}

test_report_callgraph_min_percent_hides_branches() {
	build_graph || return 1
	expect_rc 0 "$SP" report g.spulse -g callee,15 --top 1 || return 1
	grep -q -- '--30.00%--b' out || die "30% branch hidden" || return 1
	! grep -q 'start' out || die "10% branch shown despite MIN 15" || return 1
	# the last shown branch is now b
	grep -q -- ' --30.00%--b' out || die "b is not the last branch"
}

test_report_callgraph_total_uses_paths_through_function() {
	build_graph || return 1
	# by total, main (9 of 10) in callee order is a root: a bare chain
	expect_rc 0 "$SP" report g.spulse -g callee --by total --top 2 || return 1
	grep -A3 'main \[kernel.kallsyms\]$' out | sed -n 3p | grep -q -- '---main$' ||
		die "$(cat out)" || return 1
	# caller order for a: main -> a (6 samples, all of a's)
	expect_rc 0 "$SP" report g.spulse -g caller --by total --top 0 || return 1
	grep -A4 '  a \[kernel.kallsyms\]$' out | sed -n 3,4p >got
	printf '            ---main\n               a\n' | diff - got ||
		die "a's caller chain"
}

test_report_callgraph_follows_filters() {
	build_graph || return 1
	expect_rc 0 "$SP" report g.spulse -g callee --top 1 --time 0,0.0000055 ||
		return 1
	# the first 6 samples (0..5 us after the first) are main;a;leaf
	head -n 1 out | grep -q ': 6 samples' || die "$(head -n 1 out)" || return 1
	grep -q -- '---leaf' out && grep -q '^               a$' out ||
		die "filtered graph: $(cat out)" || return 1
	! grep -q -- '--b' out || die "b outside the window"
}

# --help of every subcommand at man-page depth: for each command that
# `spulse --help` lists, `spulse CMD --help` exits 0 and has the sections
# NAME, SYNOPSIS, DESCRIPTION, OPTIONS, EXAMPLES and EXIT STATUS, and every
# long option of the command's getopt_long table (the struct option arrays
# in user/cli/cmd_CMD.c, *_LONGOPTS macros expanded from user/*/*.[ch])
# appears in that text as --NAME. The failure lists each command and what
# it lacks.

HELP_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../user/cli" && pwd)

# help_long_options CMD: the long option names of cmd_CMD.c, one per line
help_long_options() {
	python3 - "$HELP_SRC" "$1" <<'EOF'
import re, sys, os, glob
src, cmd = sys.argv[1], sys.argv[2]
path = os.path.join(src, "cmd_%s.c" % cmd)
if not os.path.exists(path):
    sys.exit("no source " + path)
# #define NAME_LONGOPTS ... (continued lines) from every header and source
# of every room (user/*/, e.g. analysis/filter.h)
macros = {}
for f in glob.glob(os.path.join(src, "..", "*", "*.[ch]")):
    text = open(f, encoding="utf-8", errors="replace").read().replace("\\\n", " ")
    for m in re.finditer(r"^#define\s+(\w+_LONGOPTS)\b(.*)$", text, re.M):
        macros[m.group(1)] = m.group(2)
def expand(body, depth=0):
    names = re.findall(r'\{\s*"([^"]+)"\s*,', body)
    if depth < 8:
        for mac in re.findall(r"\b(\w+_LONGOPTS)\b", body):
            names += expand(macros.get(mac, ""), depth + 1)
    return names
text = open(path, encoding="utf-8", errors="replace").read()
names = []
for m in re.finditer(r"struct\s+option\s+\w+\s*\[\s*\]\s*=\s*\{(.*?)\n\s*\};", text, re.S):
    names += expand(m.group(1))
for n in sorted(set(names)):
    print(n)
EOF
}

test_help_every_subcommand_is_a_man_page() {
	local cmds c sec opt missing="" n=0
	expect_rc 0 "$SP" --help || return 1
	cmds=$(awk '/^commands:/ {s = 1; next} s && /^  [a-z]/ {print $1}' out)
	[ "$(echo "$cmds" | wc -w)" -ge 8 ] ||
		die "spulse --help lists too few commands: $cmds" || return 1
	for c in $cmds; do
		n=$((n + 1))
		if ! "$SP" "$c" --help >"help.$c" 2>"help.$c.err"; then
			missing+="  $c: --help exits non-zero"$'\n'
			continue
		fi
		for sec in NAME SYNOPSIS DESCRIPTION OPTIONS EXAMPLES "EXIT STATUS"; do
			grep -q "^$sec\$" "help.$c" ||
				missing+="  $c: no $sec section"$'\n'
		done
		grep -A2 '^NAME$' "help.$c" | grep -q "spulse $c - " ||
			missing+="  $c: NAME line is not 'spulse $c - ...'"$'\n'
		if ! help_long_options "$c" >"opts.$c" 2>"opts.$c.err"; then
			missing+="  $c: $(cat "opts.$c.err")"$'\n'
			continue
		fi
		[ -s "opts.$c" ] || missing+="  $c: no getopt table found"$'\n'
		while read -r opt; do
			grep -q -- "--$opt\\b" "help.$c" ||
				missing+="  $c: --$opt not in --help"$'\n'
		done <"opts.$c"
	done
	[ -z "$missing" ] || die "of $n commands:"$'\n'"$missing"
}

# the parser itself must see what it claims: export's table includes
# --format and the macro-expanded --kallsyms
test_help_option_parser_expands_macros() {
	help_long_options export >o || return 1
	grep -qx format o && grep -qx kallsyms o && grep -qx help o ||
		die "export options: $(tr '\n' ' ' <o)"
}

# spulse --version: one line "spulse X.Y.Z" (the version of
# include/spulse/version.h), rc 0; spulse --help lists every export format
# that `spulse export --help` documents.
test_help_version_and_export_formats() {
	local want f
	want=$(sed -n 's/^#define SPULSE_VERSION[[:space:]]*"\(.*\)"/\1/p' \
		"$HELP_SRC/../../include/spulse/version.h")
	[ -n "$want" ] || die "no SPULSE_VERSION in version.h" || return 1
	expect_rc 0 "$SP" --version || return 1
	[ "$(cat out)" = "spulse $want" ] || die "--version: $(cat out)" ||
		return 1
	expect_rc 0 "$SP" -V || return 1
	[ "$(cat out)" = "spulse $want" ] || die "-V: $(cat out)" || return 1
	"$SP" --help >h || return 1
	grep -q -- '--version' h || die "--help does not name --version" ||
		return 1
	for f in folded JSON perf-script trace-event pprof speedscope; do
		grep '^  export ' h | grep -qw -- "$f" ||
			die "spulse --help: export lacks $f: $(grep '^  export' h)" ||
			return 1
	done
}

# shellcheck shell=bash
# Shared by tests/kernels/*.sh: the kernel list and the private apt config.
#
# SPULSE_CACHE         cache root (default ~/.cache/spulse)
# SPULSE_MIRROR        Debian mirror (default http://deb.debian.org/debian)
# SPULSE_SECURITY_MIRROR  (default http://deb.debian.org/debian-security)
# SPULSE_APT_MAX_AGE   refresh a suite's package lists older than this many
#                      hours (default 24); 0 = always refresh

kl_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
kl_list=${SPULSE_KERNELS_LIST:-$kl_here/kernels.list}
kl_cache=${SPULSE_CACHE:-$HOME/.cache/spulse}
kl_mirror=${SPULSE_MIRROR:-http://deb.debian.org/debian}
kl_security=${SPULSE_SECURITY_MIRROR:-http://deb.debian.org/debian-security}

kl_die() { echo "${kl_prog:-kernels}: $*" >&2; exit 1; }

# Print the list's entries (comments and blank lines removed), one a line.
kl_entries() {
	[ -f "$kl_list" ] || kl_die "no kernel list $kl_list"
	sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$kl_list"
}

# shellcheck disable=SC2120 # arguments are optional
# kl_ids [BOOT...]: the ids, in list order; with arguments, only entries
# whose boot column is one of them.
kl_ids() {
	local id boot want
	while read -r id _ _ _ _ boot; do
		if [ $# -eq 0 ]; then echo "$id"; continue; fi
		for want in "$@"; do
			[ "$boot" != "$want" ] || { echo "$id"; break; }
		done
	done < <(kl_entries)
}

# kl_entry ID: set K_ID K_SUITE K_SERIES K_FLAVOUR K_BUILD K_BOOT.
kl_entry() {
	local line
	line=$(kl_entries | awk -v id="$1" '$1 == id && !done { print; done = 1 }')
	[ -n "$line" ] || kl_die "kernel '$1' is not in $kl_list (ids: $(kl_ids | tr '\n' ' '))"
	# shellcheck disable=SC2034 # used by the callers
	read -r K_ID K_SUITE K_SERIES K_FLAVOUR K_BUILD K_BOOT <<< "$line"
	[ -n "$K_BOOT" ] || kl_die "kernel '$1': short line in $kl_list: $line"
	case $K_BUILD in host|chroot) ;; *) kl_die "kernel '$1': build must be host or chroot, not '$K_BUILD'" ;; esac
	case $K_BOOT in check|full|no) ;; *) kl_die "kernel '$1': boot must be check, full or no, not '$K_BOOT'" ;; esac
}

# kl_apt_setup SUITE: create the private apt config for SUITE under
# $kl_cache/apt/SUITE and set KL_APT (an array of apt -o options). The
# host's sources list is never read or touched.
kl_apt_setup() {
	local suite=$1 d=$kl_cache/apt/$1
	mkdir -p "$d/lists/partial" "$d/cache/archives/partial"
	{
		echo "deb $kl_mirror $suite main"
		# A release's kernel updates come through -security and -updates
		# (the host's 6.1 is one); sid and backports have none.
		case $suite in
		sid|unstable|experimental|*-*) ;;
		*)	echo "deb $kl_mirror $suite-updates main"
			echo "deb $kl_security $suite-security main" ;;
		esac
	} > "$d/sources.list.$$"
	# (per-process name: several fetches of one suite may run at once)
	if ! cmp -s "$d/sources.list.$$" "$d/sources.list" 2>/dev/null; then
		mv -f "$d/sources.list.$$" "$d/sources.list"
	else
		rm -f "$d/sources.list.$$"
	fi
	KL_APT=(-o "Dir::Etc::sourcelist=$d/sources.list"
		-o Dir::Etc::sourceparts=/nonexistent
		-o "Dir::State::Lists=$d/lists"
		-o "Dir::Cache=$d/cache"
		-o "Dir::State::status=/dev/null"
		-o Acquire::Check-Valid-Until=false
		-o Acquire::Languages=none
		-o APT::Sandbox::User=root
		-o APT::Get::List-Cleanup=false)
	KL_APT_DIR=$d
}

# kl_apt_update SUITE [force]: refresh SUITE's lists when older than
# SPULSE_APT_MAX_AGE hours (or when forced); one updater at a time. A failed
# refresh keeps the old lists (works offline once fetched).
kl_apt_update() {
	local suite=$1 force=${2:-} age=${SPULSE_APT_MAX_AGE:-24} stamp
	kl_apt_setup "$suite"
	stamp=$KL_APT_DIR/.updated
	(
		flock 8
		if [ -z "$force" ] && [ -f "$stamp" ] && [ "$age" != 0 ] &&
			[ -n "$(find "$stamp" -newer "$KL_APT_DIR/sources.list" -mmin -$((age * 60)) 2>/dev/null)" ]; then
			exit 0
		fi
		echo "${kl_prog:-kernels}: apt-get update ($suite)" >&2
		if apt-get "${KL_APT[@]}" -q update >&2; then
			touch "$stamp"
		else
			echo "${kl_prog:-kernels}: apt-get update for $suite failed; using the lists present" >&2
		fi
	) 8> "$KL_APT_DIR/.lock"
}

# kl_resolve: the newest "<series>.*-<flavour>" kernel release in K_SUITE
# (e.g. 6.12.95+deb12-amd64), from the headers packages in its lists.
kl_resolve() {
	local re
	re="^linux-headers-(${K_SERIES//./\\.}\\.[0-9]+(-[0-9]+)?(\\+deb[0-9]+)?-${K_FLAVOUR})\$"
	apt-cache "${KL_APT[@]}" pkgnames linux-headers- 2>/dev/null |
		grep -E "$re" | sed 's/^linux-headers-//' | sort -V | tail -n1
}

# kl_pkg_exists PKG: PKG has a candidate in the configured suite.
kl_pkg_exists() {
	apt-cache "${KL_APT[@]}" show "$1" >/dev/null 2>&1
}

# kl_depends PKG: PKG's plain Depends (first of each alternative), one a line.
kl_depends() {
	apt-cache "${KL_APT[@]}" show "$1" 2>/dev/null |
		awk '/^Depends: / && !done { print substr($0, 10); done = 1 }' |
		tr ',' '\n' | sed -e 's/|.*//' -e 's/(.*//' -e 's/[[:space:]]//g' -e '/^$/d'
}

# kl_fmt_secs SECONDS: "12.3s"
kl_fmt_secs() { printf '%.1fs' "$1"; }
kl_now() { date +%s.%N; }
kl_since() { echo "$(date +%s.%N) - $1" | bc; }

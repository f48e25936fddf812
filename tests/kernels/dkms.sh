#!/usr/bin/env bash
# DKMS on every listed kernel: a real `dkms add`, `dkms build` (signed
# with a throw-away MOK key) and `dkms install` of this source tree and its
# dkms.conf against each kernel's header set (tests/kernels/kernels.list).
#
# usage: dkms.sh [ID...]          (default: every listed kernel)
#
# Nothing of the host's is touched: the source tree (--sourcetree), the
# DKMS tree (--dkmstree) and the install tree (--installtree, with
# --no-depmod) are all under a scratch directory, the headers come from
# tests/kernels/fetch.sh --headers (--kernelsourcedir), and DKMS's signing
# (sign_file, mok_signing_key, mok_certificate, which dkms takes from the
# environment) points at the headers' scripts/sign-file and a key made for
# this run, so dkms never creates /var/lib/dkms/mok.key. Kernels marked
# build=chroot run dkms inside that suite's chroot (tests/kernels/chroot.sh,
# dkms installed there once), the same way build-module.sh runs make.
# Checked per kernel: the built and the installed spulse.ko have the
# kernel's vermagic and carry the run's signer and the kernel's
# CONFIG_MODULE_SIG_HASH; then tests/kernels/sign.sh signs the built module
# again with scripts/sign-file by hand. One PASS/FAIL line per kernel.
# RESULT=FILE writes "passed failed"; KEEP=1 keeps the scratch directory;
# WORK=DIR sets it (default a fresh mktemp -d).
set -uo pipefail
kl_prog=dkms
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/kernels/lib.sh
. "$here/lib.sh"

top=$(realpath "$here/../..")
command -v dkms >/dev/null || kl_die "no dkms on this machine (apt-get install dkms)"
command -v openssl >/dev/null || kl_die "no openssl"
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$top/dkms.conf")
[ -n "$ver" ] || kl_die "no PACKAGE_VERSION in $top/dkms.conf"
name=$(sed -n 's/^PACKAGE_NAME="\(.*\)"$/\1/p' "$top/dkms.conf")
[ "$name" = spulse ] || kl_die "dkms.conf: PACKAGE_NAME is '$name', not spulse"

if [ $# -eq 0 ]; then
	mapfile -t ids < <(kl_ids)
else
	ids=("$@")
	for id in "${ids[@]}"; do kl_entry "$id"; done
fi

work=${WORK:-$(mktemp -d "${TMPDIR:-/tmp}/spulse-dkms.XXXXXX")}
mkdir -p "$work"
work=$(realpath "$work")
[ -n "${KEEP:-}" ] || [ -n "${WORK:-}" ] || trap 'rm -rf "$work"' EXIT

# The throw-away MOK key pair, in the form dkms makes its own
# (/var/lib/dkms/mok.key + mok.pub, a DER certificate).
cn="spulse dkms test key $$"
openssl req -new -x509 -nodes -days 1 -subj "/CN=$cn" -newkey rsa:2048 \
	-keyout "$work/mok.key" -outform DER -out "$work/mok.pub" >/dev/null 2>&1 ||
	kl_die "openssl cannot make a key pair"

passed=0
failed=0
for id in "${ids[@]}"; do
	kl_entry "$id"
	t=$work/$id
	rm -rf "$t"
	mkdir -p "$t/src/$name-$ver" "$t/dkms" "$t/bin"
	log=$t/dkms.log
	: > "$log"
	t0=$(kl_now)
	why=
	if ! kroot=$("$here/fetch.sh" --headers "$id" 2>> "$log"); then
		why="cannot fetch the headers"
	fi
	REL=unresolved
	if [ -z "$why" ]; then
		# shellcheck source=/dev/null
		. "$kroot/kernel.env"
		# The source tree as it would be copied to /usr/src/spulse-VER:
		# what dkms.conf and Kbuild read, no build products.
		rsync -rl --exclude='*.o' --exclude='*.ko' --exclude='.*.cmd' \
			--exclude='*.mod' --exclude='*.mod.c' --exclude=modules.order \
			--exclude=Module.symvers --exclude=/kmod/compat/features.h \
			"$top/dkms.conf" "$top/Kbuild" "$top/kmod" "$top/include" \
			"$t/src/$name-$ver/"
		mkdir -p "$t/modules/$REL"
		hash=$(sed -n 's/^CONFIG_MODULE_SIG_HASH="\(.*\)"$/\1/p' "$KDIR/.config")
		opts=(--sourcetree "$t/src" --dkmstree "$t/dkms")
		kopts=(-k "$REL" --kernelsourcedir "$KDIR")
		# dkms takes the signing settings from the environment
		# (framework.conf otherwise); the headers' own sign-file
		# (inside a chroot, its suite's libcrypto; on the host, when it
		# cannot run here -- 5.10's wants libcrypto.so.1.1 -- the host
		# kernel's sign-file: the appended signature is the same)
		sf=$KDIR/scripts/sign-file
		if [ "$K_BUILD" = host ] && [[ "$("$sf" 2>&1)" != *Usage:* ]]; then
			hsf=$(find /usr/lib/linux-kbuild-*/scripts/ -name sign-file 2>/dev/null | sort -V | tail -n1)
			echo "dkms: $sf cannot run here; signing with ${hsf:-nothing}" >> "$log"
			[ -z "$hsf" ] || sf=$hsf
		fi
		envs=(sign_file="$sf" mok_signing_key="$work/mok.key"
			mok_certificate="$work/mok.pub" PATH="$t/bin:$PATH")
		script="set -e
dkms --version
dkms add -m $name -v $ver ${opts[*]}
dkms build -m $name -v $ver ${opts[*]} ${kopts[*]}
dkms install -m $name -v $ver ${opts[*]} ${kopts[*]} --installtree $t/modules --no-depmod
dkms status -m $name -v $ver ${opts[*]} --installtree $t/modules"
		if [ "$K_BUILD" = chroot ]; then
			# shellcheck disable=SC2086 # words
			if ! "$here/chroot.sh" "$K_SUITE" --pkgs "$HOSTDEPS dkms openssl" >> "$log" 2>&1; then
				why="cannot make the $K_SUITE chroot with dkms"
			else
				echo "dkms: chroot $K_SUITE:" >> "$log"
				"$here/chroot.sh" "$K_SUITE" --bind "$kroot" --bind "$work" -- \
					env "${envs[@]}" bash -c "$script" >> "$log" 2>&1 ||
					why="dkms failed (chroot $K_SUITE)"
			fi
		else
			# Headers built with a compiler this host lacks (5.10:
			# gcc-10): the host's gcc under that name, as
			# build-module.sh does with CC= (dkms.conf's MAKE has no
			# CC=, and a user installs the headers' compiler).
			cc=$(sed -n 's/^CC = .*)\(gcc-[0-9]*\)$/\1/p' "$KDIR/.kernelvariables" 2>/dev/null | head -n1)
			if [ -n "$cc" ] && ! command -v "$cc" >/dev/null; then
				echo "dkms: $REL was built with $cc, not on this host: $cc = $(command -v gcc)" >> "$log"
				ln -s "$(command -v gcc)" "$t/bin/$cc"
			fi
			env "${envs[@]}" bash -c "$script" >> "$log" 2>&1 || why="dkms failed"
		fi
	fi
	if [ -z "$why" ]; then
		built=$(find "$t/dkms/$name/$ver/$REL" -name "$name.ko*" 2>/dev/null | head -n1)
		inst=$(find "$t/modules/$REL" -name "$name.ko*" 2>/dev/null | head -n1)
		if [ -z "$built" ]; then
			why="no $name.ko in the dkms tree"
		elif [ -z "$inst" ]; then
			why="dkms install put no $name.ko under $t/modules/$REL"
		elif ! cmp -s "$built" "$inst"; then
			why="the installed $inst differs from the built $built"
		else
			vm=$(modinfo -F vermagic "$inst" | cut -d' ' -f1)
			signer=$(modinfo -F signer "$inst")
			algo=$(modinfo -F sig_hashalgo "$inst")
			if [ "$vm" != "$REL" ]; then
				why="vermagic $vm, not $REL"
			elif [ "$signer" != "$cn" ]; then
				why="signer '$signer', not '$cn' (dkms did not sign with the run's key)"
			elif [ -n "$hash" ] && [ "$algo" != "$hash" ]; then
				why="sig_hashalgo $algo, not the kernel's CONFIG_MODULE_SIG_HASH $hash"
			elif ! "$here/sign.sh" "$KDIR" "$built" >> "$log" 2>&1; then
				why="sign.sh failed"
			fi
		fi
	fi
	secs=$(kl_fmt_secs "$(kl_since "$t0")")
	if [ -z "$why" ]; then
		passed=$((passed + 1))
		dv=$(sed -n 's/^dkms-//p' "$log" | head -n1)
		echo "PASS $id ($REL): dkms $dv add/build/install, signed by '$signer' ($algo), installed as ${inst#"$t/modules/"}, re-signed by sign.sh ($secs)"
	else
		failed=$((failed + 1))
		echo "FAIL $id ($REL): $why ($secs; log $log)"
		grep -E 'Error|error:|ERROR|failed|not found' "$log" | head -n 10 | sed 's/^/  /'
		# a failed run keeps its scratch directory to read the log
		trap - EXIT
	fi
done
echo "dkms: $passed passed, $failed failed"
[ -z "${RESULT:-}" ] || echo "$passed $failed" > "$RESULT"
[ "$failed" -eq 0 ]

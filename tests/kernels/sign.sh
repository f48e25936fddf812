#!/usr/bin/env bash
# Sign a built spulse.ko by hand, as for a Secure Boot machine, with a
# throw-away key, and check that modinfo reads the signature back.
#
# usage: sign.sh KDIR MODULE      (KDIR: the kernel's headers directory)
#
# Works on a copy (MODULE is not changed): strips a signature already
# appended (dkms signs what it builds) and checks modinfo then shows none,
# makes a key pair (openssl req -new -x509, DER certificate), runs
# KDIR/scripts/sign-file sha256 key.pem cert.der, and checks modinfo -F
# signer is the key's CN, sig_hashalgo is sha256 and sig_key is the
# certificate's serial number. The headers' sign-file is linked
# against their suite's libcrypto; when it cannot run here (5.10 wants
# libcrypto.so.1.1), the host kernel's sign-file is used instead (the
# appended signature's format is the same) and that is said.
# Prints "sign: ok ..." or "sign: FAIL ..." (exit 1).
set -euo pipefail
[ $# -eq 2 ] || { sed -n '5p' "$0" | sed 's/^# //' >&2; exit 2; }
kdir=$1
mod=$2
fail() { echo "sign: FAIL $mod: $*" >&2; exit 1; }
[ -f "$mod" ] || fail "no such module"
[ -d "$kdir" ] || fail "no headers directory $kdir"

sign_file=$kdir/scripts/sign-file
if [[ "$("$sign_file" 2>&1 || true)" != *Usage:* ]]; then
	host=$(find /usr/lib/linux-kbuild-*/scripts/ -name sign-file 2>/dev/null | sort -V | tail -n1 || true)
	[ -n "$host" ] || fail "$sign_file cannot run here and the host has no linux-kbuild sign-file"
	echo "sign: $sign_file cannot run here ($("$sign_file" 2>&1 | head -n1)); using $host"
	sign_file=$host
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/spulse-sign.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
ko=$tmp/spulse.ko
cp "$mod" "$ko"

# An appended signature ends with struct module_signature (12 bytes, the
# signature's length big-endian in its last 4) and the 28-byte marker.
marker='~Module signature appended~'
if [ "$(tail -c 28 "$ko" | head -c 27 | tr -d '\0')" = "$marker" ]; then
	size=$(stat -c %s "$ko")
	siglen=$(tail -c 32 "$ko" | head -c 4 | od -An -tu1 | awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4 }')
	if [ "$siglen" -le 0 ] || [ "$siglen" -ge "$size" ]; then
		fail "bad signature length $siglen"
	fi
	truncate -s $((size - 28 - 12 - siglen)) "$ko"
	[ -z "$(modinfo -F signer "$ko")" ] || fail "still signed after stripping the old signature"
	modinfo -F vermagic "$ko" >/dev/null || fail "not a module after stripping the old signature"
fi

cn="spulse sign test $$"
openssl req -new -x509 -nodes -days 1 -subj "/CN=$cn" -newkey rsa:2048 \
	-keyout "$tmp/key.pem" -outform DER -out "$tmp/cert.der" >/dev/null 2>&1 ||
	fail "openssl cannot make a key pair"
"$sign_file" sha256 "$tmp/key.pem" "$tmp/cert.der" "$ko" || fail "$sign_file failed"

signer=$(modinfo -F signer "$ko")
algo=$(modinfo -F sig_hashalgo "$ko")
key=$(modinfo -F sig_key "$ko" | tr -d ':\n' | tr '[:lower:]' '[:upper:]')
serial=$(openssl x509 -inform DER -in "$tmp/cert.der" -noout -serial |
	sed 's/^serial=//' | tr '[:lower:]' '[:upper:]')
[ "$signer" = "$cn" ] || fail "signer '$signer', not '$cn'"
[ "$algo" = sha256 ] || fail "sig_hashalgo '$algo', not sha256"
# (a PKCS#7 signature names its key by the certificate's serial number)
[ -n "$serial" ] || fail "openssl shows no serial number"
nozeros() { local v=$1; while [ "${v#0}" != "$v" ]; do v=${v#0}; done; echo "$v"; }
[ "$(nozeros "$key")" = "$(nozeros "$serial")" ] || fail "sig_key $key is not the certificate's serial $serial"
echo "sign: ok $mod: signer '$signer', sig_hashalgo $algo, sig_key $key"

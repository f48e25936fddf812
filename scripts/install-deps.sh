#!/usr/bin/env bash
# Install every Debian package spulse needs to build, test and run its VM.
# Idempotent: runs apt-get only when something is missing, and
# `apt-get update` at most once. Needs root (or sudo) on Debian 12.
set -euo pipefail

pkgs=(
	build-essential make gcc clang libclang-rt-14-dev llvm
	libcmocka-dev libelf-dev libdw-dev pkg-config
	python3 binutils file time util-linux
	linux-headers-amd64 linux-source-6.1 kmod sparse bc flex bison
	libssl-dev dwarves rsync zstd xz-utils cpio
	qemu-system-x86 busybox-static linux-perf
	libdebuginfod-dev debuginfod elfutils libiberty-dev zlib1g-dev
	protobuf-c-compiler libprotobuf-c-dev golang-go tmux nodejs g++
	libc6-dbg libsqlite3-dev sqlite3 libcurl4-openssl-dev
	clickhouse-server clickhouse-client chromium debootstrap dkms openssl strace
)

missing=()
for p in "${pkgs[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		missing+=("$p")
	fi
done
# npm: Debian packages it apart from nodejs; other nodejs builds bundle it.
command -v npm >/dev/null 2>&1 || missing+=(npm)
[ "${#missing[@]}" -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}" >&2
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"

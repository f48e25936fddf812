#!/usr/bin/env bash
# Install the host packages the VM, `make demo` and the e2e suite need, if
# any is missing. Idempotent; runs `apt-get update` at most once and only
# when something must be installed.
set -euo pipefail

pkgs=(qemu-system-x86 busybox-static cpio kmod linux-headers-amd64 libelf-dev
	libdw-dev gcc make bc flex bison libssl-dev dwarves zstd xz-utils file
	python3 binutils linux-perf debootstrap)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "deps: installing ${missing[*]}" >&2
sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"

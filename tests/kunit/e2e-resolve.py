#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host side of the e2e module-resolution scenarios (guest-e2e.sh).

usage: e2e-resolve.py DIR SPULSE

DIR holds what one scenario saved: the raw cpuN streams, `meta` (the whole
meta stream) and `resolve` (first line the check, then one pid a line);
`alive` also needs `meta.mid`, the part of meta read while the process was
running. Both are read with `spulse dump`. A sample *resolves* when a
module record of its pid in meta covers its user IP (the leaf user frame,
exact; what the kernel's miss check looks at; the return addresses above it
may be garbage in startup code without frame pointers). The drainer makes
such frames module-relative; this check does not depend on when the
drainer would have read meta:

  resolved  at least 3 of the listed pids have samples with user frames,
            and every such sample of every listed pid resolves
  alive     the listed pid has samples, every one with a user frame
            resolves, and
            meta.mid has its module records and no process deactivation
            of it (it was alive then: the leader had exited, the worker
            ran); busy's module records carry a build-id

Prints one PASS or FAIL line; exit 0 on PASS.
"""
import glob
import os
import re
import subprocess
import sys


def kv(words):
    out = {}
    for w in words:
        if "=" in w:
            k, v = w.split("=", 1)
            out[k] = v
    return out


def dump(spulse, path):
    r = subprocess.run([spulse, "dump", path], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True)
    if r.returncode:
        raise RuntimeError(f"spulse dump {os.path.basename(path)} "
                           f"rc={r.returncode}")
    for line in r.stdout.splitlines():
        w = line.split()
        if w:
            yield w[0], kv(w[1:])


def meta_records(spulse, path, pids, bids=None):
    mods, deact = {p: [] for p in pids}, set()
    for rec, a in dump(spulse, path):
        if rec == "module" and int(a["pid"]) in pids:
            mods[int(a["pid"])].append((int(a["start"], 16),
                                        int(a["end"], 16)))
            if bids is not None and a.get("path", "").endswith("/busy"):
                bids.append(a.get("build_id", ""))
        elif rec == "process-deactivate" and int(a["pid"]) in pids:
            deact.add(int(a["pid"]))
    return mods, deact


def main():
    d, spulse = sys.argv[1:3]
    name = "spulse_e2e_resolve." + os.path.basename(d.rstrip("/"))
    with open(os.path.join(d, "resolve")) as f:
        lines = [x.strip() for x in f if x.strip()]
    check, pids = lines[0], {int(x) for x in lines[1:]}
    bids = []
    mods, _ = meta_records(spulse, os.path.join(d, "meta"), pids, bids)
    samples = {p: 0 for p in pids}
    with_user = {p: 0 for p in pids}
    good = {p: 0 for p in pids}
    bad = {p: 0 for p in pids}
    cpus = [c for c in glob.glob(os.path.join(d, "cpu*"))
            if re.fullmatch(r"cpu[0-9]+", os.path.basename(c))]
    for cpu in sorted(cpus):
        # ids are per stream
        thread_pid, frame, stack = {}, {}, {}
        for rec, a in dump(spulse, cpu):
            if rec == "thread":
                thread_pid[a["id"]] = int(a["pid"])
            elif rec == "frame":
                frame[a["id"]] = (a["kind"], a.get("addr"))
            elif rec == "stack":
                stack[a["id"]] = (a["parent"], a["frame"])
            elif rec == "sample":
                pid = thread_pid.get(a.get("thread"))
                if pid not in pids:
                    continue
                samples[pid] += 1
                # from the leaf up: kernel frames, then the user IP
                s = a.get("stack")
                while s in stack:
                    parent, fr = stack[s]
                    kind, addr = frame.get(fr, (None, None))
                    if kind == "user":
                        with_user[pid] += 1
                        x = int(addr, 16)
                        if any(lo <= x < hi for lo, hi in mods[pid]):
                            good[pid] += 1
                        else:
                            bad[pid] += 1
                        break
                    s = parent
    n_bad, n_good = sum(bad.values()), sum(good.values())
    seen = sum(1 for p in pids if with_user[p])
    fig = (f"{len(pids)} pids, {seen} with user samples, "
           f"{sum(samples.values())} samples, {n_good} user IPs resolve, "
           f"{n_bad} do not")
    bad_pids = sorted(p for p in pids if bad[p])
    if bad_pids:
        fig += f" (pids {bad_pids[:10]})"
    if check == "resolved":
        ok = seen >= 3 and n_bad == 0
    elif check == "alive":
        mid_mods, mid_deact = meta_records(spulse,
                                           os.path.join(d, "meta.mid"), pids)
        n_mid = sum(len(v) for v in mid_mods.values())
        fig += (f"; mid-run meta: {n_mid} modules, "
                f"{len(mid_deact)} process deactivations; busy build-ids "
                f"{sorted(set(bids))}")
        # busy (linked with a build-id) lives on the 9p host mount
        ok = (seen == len(pids) and n_bad == 0 and n_mid > 0 and
              not mid_deact and bids and all(bids))
    else:
        print(f"FAIL {name}: unknown check {check!r}")
        return 1
    print(f"{'PASS' if ok else 'FAIL'} {name}: {check}: {fig}")
    return 0 if ok else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (OSError, RuntimeError, KeyError, ValueError) as e:
        print(f"FAIL spulse_e2e_resolve.{os.path.basename(sys.argv[1])}: {e}")
        sys.exit(1)

#!/usr/bin/env python3
# Content checks of the off-CPU scenarios (tests/kmod/vm-offcpu.sh), called by
# tests/kmod/vm-offcpu-check.sh: reads every oc.*.cpuN stream through
# `spulse dump`, resolves kernel frames with the guest's /proc/kallsyms
# (saved while spulse.ko was loaded) and prints one PASS/FAIL line per check.
# usage: vm-offcpu-check.py DIR SPULSE_BIN
import bisect
import glob
import os
import re
import subprocess
import sys

d, spulse = sys.argv[1], sys.argv[2]
results = []


def check(name, cond, detail=""):
    results.append(("PASS " if cond else "FAIL ") + name +
                   ("" if cond or not detail else ": " + detail))


def load_kallsyms(path):
    syms = []
    with open(path, errors="replace") as f:
        for line in f:
            p = line.split()
            if len(p) < 3 or p[1] not in "tTwW":
                continue
            mod = p[3].strip("[]") if len(p) > 3 else ""
            syms.append((int(p[0], 16), p[2], mod))
    syms.sort()
    return syms


def resolve(syms, keys, addr):
    i = bisect.bisect_right(keys, addr) - 1
    if i < 0:
        return ("?", "")
    return syms[i][1], syms[i][2]


def parse(path):
    """Records of one stream: list of (name, {key: value})."""
    out = subprocess.run([spulse, "dump", path], capture_output=True,
                         text=True, check=False).stdout
    recs = []
    for line in out.splitlines():
        if line.startswith("#"):
            continue
        toks = line.split()
        while toks and "=" not in toks[0] and toks[0].isdigit():
            toks.pop(0)
        if not toks:
            continue
        kv = dict(t.split("=", 1) for t in toks[1:] if "=" in t)
        recs.append((toks[0], kv))
    return recs


class Stream:
    def __init__(self, path):
        self.path = path
        self.cpu = int(re.search(r"cpu(\d+)$", path).group(1))
        self.recs = parse(path)
        self.frames, self.stacks, self.threads = {}, {}, {}
        self.offcpu, self.triggers = [], []
        for name, kv in self.recs:
            if name == "frame":
                self.frames[int(kv["id"])] = (kv["kind"],
                                              int(kv.get("addr", "0"), 16))
            elif name == "stack":
                par = None if kv["parent"] == "root" else int(kv["parent"])
                self.stacks[int(kv["id"])] = (par, int(kv["frame"]))
            elif name == "thread":
                self.threads[int(kv["id"])] = (int(kv["pid"]), int(kv["tid"]),
                                               kv["comm"])
            elif name == "offcpu":
                self.offcpu.append(kv)
            elif name == "trigger":
                self.triggers.append(kv)

    def chain(self, leaf):
        """Frames leaf..root as (kind, addr)."""
        out, s = [], leaf
        while s is not None:
            par, fr = self.stacks[s]
            out.append(self.frames[fr])
            s = par
        return out


kallsyms = os.path.join(d, "oc.kallsyms")
syms = load_kallsyms(kallsyms) if os.path.exists(kallsyms) else []
keys = [s[0] for s in syms]
check("guest kallsyms saved with spulse loaded",
      any(s[2] == "spulse" for s in syms))


def scenario(prefix):
    return [Stream(p) for p in sorted(glob.glob(os.path.join(d, prefix +
                                                           ".cpu[0-9]*")))
            if os.path.getsize(p) > 0]


def first_is_cpu(streams, what):
    bad = [s.path for s in streams
           if not s.recs or s.recs[0][0] != "cpu" or
           int(s.recs[0][1]["cpu"]) != s.cpu]
    check(what + ": every stream starts with its cpu record",
          streams and not bad, " ".join(map(os.path.basename, bad)))


def leaf_name(s, stack):
    kind, addr = s.chain(stack)[0]
    return resolve(syms, keys, addr) if kind == "kernel" else (kind, "")


def own_frame_in_waker(ch):
    """A spulse.ko frame in a waker stack (leaf first) that is not below an
    interrupt entry: a wakeup from a timer interrupt names what the CPU was
    running, which may be spulse code (e.g. a debugfs control write); spulse
    frames above the interrupt, or without one, would be the probe's own."""
    for k, a in ch:
        if k != "kernel":
            continue
        name, mod = resolve(syms, keys, a)
        if mod == "spulse":
            return True
        if name.startswith("asm_"):	# interrupt entry: the rest was interrupted
            return False
    return False


def stack_checks(streams, what, waker_leaf):
    n = own = 0
    leaf_ok = wleaf_ok = wn = user = 0
    bad_leaf, bad_wleaf = {}, {}
    for s in streams:
        for r in s.offcpu:
            n += 1
            ch = s.chain(int(r["stack"]))
            if any(k == "kernel" and resolve(syms, keys, a)[1] == "spulse"
                   for k, a in ch):
                own += 1
            nm = leaf_name(s, int(r["stack"]))
            if nm[0] in ("__schedule", "schedule"):
                leaf_ok += 1
            else:
                bad_leaf[nm[0]] = bad_leaf.get(nm[0], 0) + 1
            if any(k == "user" for k, _ in ch):
                user += 1
            if r["waker"] != "none":
                wn += 1
                wch = s.chain(int(r["waker_stack"]))
                if own_frame_in_waker(wch):
                    own += 1
                wl = leaf_name(s, int(r["waker_stack"]))[0]
                if wl in waker_leaf:
                    wleaf_ok += 1
                else:
                    bad_wleaf[wl] = bad_wleaf.get(wl, 0) + 1
    check(what + ": no spulse.ko frame in any off-CPU or waker stack",
          n and own == 0, "%d of %d" % (own, n))
    check(what + ": off-CPU leaf is __schedule (%d of %d)" % (leaf_ok, n),
          n and leaf_ok == n, str(bad_leaf))
    check(what + ": waker leaf is the wakeup code (%d of %d)" % (wleaf_ok, wn),
          wn and wleaf_ok == wn, str(bad_wleaf))
    check(what + ": off-CPU stacks have a user part (%d of %d)" % (user, n),
          n and user >= 0.9 * n)


WAKER_LEAF = ("try_to_wake_up",)

# sleeper: python3 sleeping 300 x 10 ms
sl = scenario("oc.sleep")
first_is_cpu(sl, "sleeper")
iv = [(s, r) for s in sl for r in s.offcpu]
check("sleeper: >= 250 off-CPU records (%d)" % len(iv), len(iv) >= 250)
cpu_in_ok = all(int(r["cpu_in"]) == s.cpu for s, r in iv)
check("sleeper: cpu_in is the stream's CPU", iv and cpu_in_ok)
pids = {s.threads[int(r["thread"])][0] for s, r in iv}
check("sleeper: every interval is the target's (%s)" % sorted(pids),
      len(pids) == 1)
sleeps = [(s, r) for s, r in iv if r["state"] == "S" and
          int(r["blocked_ns"]) >= 9000000 and int(r["blocked_ns"]) < 200000000]
check("sleeper: >= 250 S intervals blocked 9..200 ms (%d)" % len(sleeps),
      len(sleeps) >= 250)
woken = [(s, r) for s, r in sleeps if r["waker"] != "none"]
check("sleeper: >= 90%% of the sleeps have a waker (%d of %d)" %
      (len(woken), len(sleeps)), len(woken) >= 0.9 * max(len(sleeps), 1))
rq = all(int(r["runq_ns"]) < 100000000 for s, r in sleeps)
check("sleeper: run-queue delay < 100 ms", sleeps and rq)
stack_checks(sl, "sleeper", WAKER_LEAF)
tr = [(s, t) for s in sl for t in s.triggers]
check("sleeper: exactly one trigger mark (%d)" % len(tr), len(tr) == 1)
if tr:
    t = tr[0][1]
    check("trigger: manual, seq 0, no window, text",
          t["reason"] == "manual" and t["seq"] == "0" and
          t["window_start_ns"] == "0" and t["window_end_ns"] == "0" and
          t["value_ns"] == "0" and t["text"] == r"debugfs\x20trigger",
          str(t))
    times = [int(r["time_ns"]) for s, r in iv]
    check("trigger: time inside the recording",
          times and min(times) < int(t["time_ns"]) < max(times))

# pingpong: two threads waking each other
pp = scenario("oc.pp")
first_is_cpu(pp, "pingpong")
iv = [(s, r) for s in pp for r in s.offcpu]
check("pingpong: >= 1000 off-CPU records (%d)" % len(iv), len(iv) >= 1000)
check("pingpong: all >= offcpu_min_us (5 us)",
      iv and all(int(r["blocked_ns"]) + int(r["runq_ns"]) >= 5000
                 for s, r in iv))
sw = [(s, r) for s, r in iv if r["state"] == "S" and r["waker"] != "none"]
other = [(s, r) for s, r in sw
         if s.threads[int(r["waker"])][0] == s.threads[int(r["thread"])][0]
         and s.threads[int(r["waker"])][1] != s.threads[int(r["thread"])][1]]
check("pingpong: woken by the other thread (%d of %d S with waker)" %
      (len(other), len(sw)), sw and len(other) >= 0.9 * len(sw))
stack_checks(pp, "pingpong", WAKER_LEAF)
rr = [r for s, r in iv if r["state"] == "R"]
check("pingpong: R intervals have no waker and no blocked time",
      all(r["waker"] == "none" and r["blocked_ns"] == "0" for r in rr))

for line in results:
    print(line)

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""perf_to_spool: a SPULSE spool holding exactly the samples of a real
perf.data (recorded with `perf record -e cpu-clock -g`), for bench-report.

    perf_to_spool.py PERF.DATA SPOOLGEN OUT.spulse

Reads `perf script --show-mmap-events --ns -F comm,pid,tid,time,ip,dso`:
every PERF_RECORD_MMAP2/MMAP of a file becomes a module record (pid,
start, end, file offset, path); every sample becomes one spool sample
(thread = pid/tid with its comm, time in ns from the first event, stack
root first). perf script prints a file-backed frame as its file offset
(the DSO-relative address), which is exactly a spool module frame's rel;
kernel frames stay absolute (OUT.kallsyms = a copy of /proc/kallsyms, the
symbols perf itself uses on this host); other user frames absolute. The
spoolgen text goes through tests/cli/spoolgen into OUT.
"""
import re
import shutil
import subprocess
import sys

MMAP = re.compile(r"PERF_RECORD_MMAP2? (-?\d+)/(-?\d+): \[0x([0-9a-f]+)"
                  r"\(0x([0-9a-f]+)\) @ (0x[0-9a-f]+|0)[^\]]*\]: \S+ (.*)$")
HEAD = re.compile(r"^\s*(.*?)\s+(-?\d+)/(-?\d+)\s+(\d+)\.(\d+):")
FRAME = re.compile(r"^\s*([0-9a-f]+) \((.*)\)\s*$")


def main():
    data, spoolgen, out = sys.argv[1:4]
    p = subprocess.Popen(["perf", "script", "-i", data, "--show-mmap-events",
                          "--ns", "-F", "comm,pid,tid,time,ip,dso"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True, errors="replace")
    lines = ["# header start_us=1000000 interval_us=%d" % int(sys.argv[4])
             if len(sys.argv) > 4 else "# header start_us=1000000 interval_us=1000"]
    mods, frames, stacks, threads = {}, {}, {}, {}
    t0 = None
    n = 0
    cur = None

    def frame(key, text):
        if key not in frames:
            frames[key] = len(frames)
            lines.append("frame id=%d %s" % (frames[key], text))
        return frames[key]

    def stack(chain):
        parent = "root"
        key = ()
        for f in chain:
            key = key + (f,)
            if key not in stacks:
                stacks[key] = len(stacks)
                lines.append("stack id=%d parent=%s frame=%d" %
                             (stacks[key], parent, f))
            parent = str(stacks[key])
        return stacks[key]

    def flush():
        nonlocal n
        if not cur or not cur["chain"]:
            return
        pid, tid, comm, t = cur["pid"], cur["tid"], cur["comm"], cur["t"]
        if (pid, tid, comm) not in threads:
            threads[(pid, tid, comm)] = len(threads)
            c = re.sub(r"[^\x21-\x7e]", lambda m: "\\x%02x" % ord(m.group()) if ord(m.group()) < 256 else "?", comm) or "?"
            lines.append("thread id=%d pid=%d tid=%d comm=%s" %
                         (threads[(pid, tid, comm)], pid, tid, c))
        lines.append("sample t=%d thread=%d stack=%d" %
                     (t, threads[(pid, tid, comm)], stack(cur["chain"][::-1])))
        n += 1

    for line in p.stdout:
        line = line.rstrip("\n")
        if "PERF_RECORD_MMAP" in line:
            m = MMAP.search(line)
            if not m:
                continue
            pid = int(m.group(1))
            path = m.group(6).strip()
            if pid < 0 or not path.startswith("/"):
                continue
            start, length = int(m.group(3), 16), int(m.group(4), 16)
            pgoff = int(m.group(5), 16)
            key = (pid, path, pgoff, length)
            if key not in mods:
                mods[key] = len(mods)
                lines.append("module id=%d pid=%d start=0x%x end=0x%x "
                             "file_offset=0x%x path=%s build_id=" %
                             (mods[key], pid, start, start + length, pgoff,
                              path))
            continue
        h = HEAD.match(line)
        if h:
            flush()
            ns = int(h.group(4)) * 1000000000 + int(h.group(5))
            if t0 is None:
                t0 = ns
            cur = {"comm": h.group(1), "pid": int(h.group(2)),
                   "tid": int(h.group(3)), "t": max(ns - t0, 0), "chain": []}
            continue
        f = FRAME.match(line)
        if f and cur is not None:
            ip, dso = int(f.group(1), 16), f.group(2)
            if dso.startswith("[kernel.kallsyms]"):
                cur["chain"].append(frame(("k", ip), "kind=kernel addr=0x%x" % ip))
            elif dso.startswith("/"):
                mid = next((i for (pid, path, pg, ln), i in mods.items()
                            if pid == cur["pid"] and path == dso and
                            pg <= ip < pg + ln), None)
                if mid is None:
                    continue
                cur["chain"].append(frame(("m", mid, ip),
                                          "kind=module module=%d rel=0x%x" % (mid, ip)))
            elif ip and ip < 1 << 47:
                cur["chain"].append(frame(("u", ip), "kind=user addr=0x%x" % ip))
    flush()
    p.wait()
    text = "\n".join(lines) + "\n"
    with open(out, "wb") as o:
        subprocess.run([spoolgen], input=text.encode(), stdout=o, check=True)
    shutil.copyfile("/proc/kallsyms", out + ".kallsyms")
    print(n)


if __name__ == "__main__":
    main()

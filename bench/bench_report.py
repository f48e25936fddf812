#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench-report: spulse's readers against perf's on the same samples.

    bench_report.py --spulse BIN --perfdata-gen BIN --dir DIR
                    [--samples N] [--runs R] [--real SPOOL[,SPOOL...]]

Spools (--spools demo,perf,synth): a real one recorded in the VM
(--real, default demo.spulse from `make demo`, skipped when missing) and a
synthetic one of N samples (`spulse synth --kallsyms`, cached in DIR): for
those perfdata_gen writes a perf.data holding exactly the same samples
(threads, mappings, callchains, times, period). And a real perf.data:
`perf record -e cpu-clock -g -F 20000` of --perf-cmd SECONDS on this host,
turned into a spool with the same samples by perf_to_spool.py. Then these
run R times each, interleaved (one run of every command per round, the
order rotating), after one warm-up round:

    report   spulse report FILE --top 20
             perf report --stdio -g none --sort dso,sym -i FILE.data
    folded   spulse flame --folded FILE
    pprof    spulse export --format pprof FILE -o /dev/null
             perf script -i FILE.data        (the baseline of both)

Output goes to /dev/null. Wall time per run (time.perf_counter around the
child) and the child's peak RSS (os.wait4). The table gives medians with
[min, max], and speedup = median over rounds of perf / spulse in the same
round; the target is >= 20x on every row. Nothing here fails on speed.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time


def run(cmd):
    """(wall seconds, peak RSS KiB, CPU seconds) of one run of cmd."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit("bench-report: failed (%d): %s" % (p.returncode, " ".join(cmd)))
    return wall, ru.ru_maxrss, ru.ru_utime + ru.ru_stime


def newer(a, b):
    return os.path.exists(a) and os.path.getmtime(a) >= os.path.getmtime(b)


def spool_samples(spulse, spool):
    out = subprocess.run([spulse, "check", "--json", spool], check=True,
                         capture_output=True, text=True).stdout
    return int(re.search(r'"samples":(\d+)', out).group(1))


def perf_data(gen, spool):
    data = spool + ".data"
    if not newer(data, spool) or not newer(data, gen):
        r = subprocess.run([gen, spool, data], check=True,
                           capture_output=True, text=True)
        sys.stderr.write(r.stderr)
    return data


def fmt_s(v):
    return "%.3f" % v if v < 10 else "%.1f" % v


def bench_spool(a, name, spool, data=None):
    if data is None:
        data = perf_data(a.perfdata_gen, spool)
    ks = spool + ".kallsyms"
    kall = ["--kallsyms", ks] if os.path.exists(ks) else []
    n = spool_samples(a.spulse, spool)
    cmds = {
        "spulse report": [a.spulse, "report", spool, "--top", "20"],
        "perf report": ["perf", "report", "--stdio", "-g", "none", "--sort",
                        "dso,sym", "-i", data] + kall,
        "spulse folded": [a.spulse, "flame", "--folded", spool],
        "spulse pprof": [a.spulse, "export", "--format", "pprof", spool,
                         "-o", "/dev/null"],
        "perf script": ["perf", "script", "-i", data] + kall,
    }
    names = list(cmds)
    res = {k: [] for k in names}
    for rnd in range(a.runs + 1):
        order = names[rnd % len(names):] + names[:rnd % len(names)]
        for k in order:
            w = run(cmds[k])
            if rnd:
                res[k].append(w)
        sys.stderr.write("bench-report: %s round %d/%d done\n" %
                         (name, rnd, a.runs))
    rows = [("report", "spulse report", "perf report"),
            ("folded", "spulse folded", "perf script"),
            ("pprof", "spulse pprof", "perf script")]
    out = []
    for row, s, p in rows:
        sw = [w for w, _, _ in res[s]]
        pw = [w for w, _, _ in res[p]]
        ratios = [y / x for x, y in zip(sw, pw)]
        cpu = [y[2] / max(x[2], 1e-3) for x, y in zip(res[s], res[p])]
        out.append((name, n, row, sw, max(r for _, r, _ in res[s]), pw,
                    max(r for _, r, _ in res[p]), p, ratios, cpu))
    return out, os.path.getsize(spool), os.path.getsize(data)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spulse", required=True)
    ap.add_argument("--perfdata-gen", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--samples", type=int, default=10000000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--real", default=None)
    ap.add_argument("--perf-cmd", default=None,
                    help="program to record with perf record (real perf.data)")
    ap.add_argument("--perf-seconds", type=int, default=15)
    ap.add_argument("--spoolgen", default=None)
    ap.add_argument("--spools", default="demo,perf,synth")
    a = ap.parse_args()
    which = a.spools.split(",")
    os.makedirs(a.dir, exist_ok=True)
    spools = []
    if "demo" in which:
        # --real A[,B...]: the first is the demo spool, the others further
        # VM recordings (e.g. 30 s of build/workload/gt at 999 Hz)
        for i, real in enumerate((a.real or "").split(",")):
            if real and os.path.exists(real):
                spools.append(("real (VM demo)" if not i else "real (VM %d)" % i,
                               real, None))
            elif real:
                print("note: no real spool (%s): %s" % (
                    real, "run `make demo` first" if not i else "missing"))
    if "perf" in which and a.perf_cmd and a.spoolgen:
        # a real perf.data of a host program, and the spool made from it
        data = os.path.join(a.dir, "real-perf.data")
        spool = os.path.join(a.dir, "real-perf.spulse")
        if not os.path.exists(data):
            subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-g",
                            "-F", "20000", "-o", data, "--", a.perf_cmd,
                            str(a.perf_seconds)], check=True,
                           stdout=subprocess.DEVNULL)
        if not newer(spool, data):
            n = subprocess.run([sys.executable, os.path.join(
                os.path.dirname(os.path.abspath(__file__)), "perf_to_spool.py"),
                data, a.spoolgen, spool, "50"], check=True,
                capture_output=True, text=True).stdout.strip()
            sys.stderr.write("bench-report: %s perf samples -> %s\n" % (n, spool))
        spools.append(("real (perf)", spool, data))
    if "synth" in which:
        synth = os.path.join(a.dir, "report-synth-%d.spulse" % a.samples)
        if not newer(synth, a.spulse):
            subprocess.run([a.spulse, "synth", "-q", "-o", synth, "--samples",
                            str(a.samples), "--threads", "16", "--kallsyms"],
                           check=True)
        spools.append(("synthetic", synth, None))
    table = []
    for name, spool, data in spools:
        rows, sb, db = bench_spool(a, name, spool, data)
        print("%s: %s, %.1f MB spool, %.1f MB perf.data (same samples%s)" %
              (name, spool, sb / 1e6, db / 1e6,
               ": perf recorded it, the spool is converted" if data else
               ": perfdata_gen wrote it from the spool"))
        table += rows
    print()
    print("%-15s %9s %-7s %26s %7s %-12s %26s %7s %18s %9s %s" % (
        "spool", "samples", "row", "spulse s med [min,max]", "RSS MB",
        "vs", "perf s med [min,max]", "RSS MB", "speedup med [min,max]",
        "cpu x", "target"))
    for (name, n, row, sw, srss, pw, prss, p, ratios, cpu) in table:
        med = statistics.median(ratios)
        print("%-15s %9d %-7s %26s %7.1f %-12s %26s %7.1f %7.1fx [%5.1f,%5.1f] %8.1fx %s" % (
            name, n, row,
            "%s [%s,%s]" % (fmt_s(statistics.median(sw)), fmt_s(min(sw)), fmt_s(max(sw))),
            srss / 1024, p,
            "%s [%s,%s]" % (fmt_s(statistics.median(pw)), fmt_s(min(pw)), fmt_s(max(pw))),
            prss / 1024, med, min(ratios), max(ratios),
            statistics.median(cpu),
            ">=20x ok" if med >= 20 else ">=20x MISSED"))
    print("(%d interleaved rounds after a warm-up; wall seconds; speedup = "
          "median of per-round perf/spulse wall time; cpu x = the same for "
          "user+sys CPU time)" % a.runs)


if __name__ == "__main__":
    main()

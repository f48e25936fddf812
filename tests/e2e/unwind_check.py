#!/usr/bin/env python3
"""Host-side checker of the unwind-vm suite (tests/e2e/unwind_run.sh).

    unwind_check.py OUTDIR RESULT

Reads what tests/e2e/unwind_guest.sh left in OUTDIR and prints one
PASS/FAIL line per assertion (INFO lines are printed, not asserted), then
writes "PASSED FAILED" to RESULT.

Spools are decoded by tests/e2e/spool.py's RawSpool (a reader of the bytes,
independent of libspulse). perf.data files are read with `perf script` on
this host (the guest ran the same files, at the same paths).

Frames. A spulse user frame is (file, file offset): a module-relative frame
(kind 0) is already `addr - start + file_offset`; an absolute user frame
(kind 1, outside every module) is unresolved; kind 3 is the truncated
marker; kernel frames (kind 2) are dropped. A perf frame is (dso, file
offset): `perf script` prints callchain addresses relative to their map
(file offsets; for an ET_EXEC file such as Debian's python3.11 a value in
the text's vaddr range is converted with its PT_LOAD); "[unknown]" dsos are
unresolved, [kernel.kallsyms] frames are dropped, and --no-inline keeps
perf's synthesized inline frames out. spulse reports callers as return
address - 1 (docs/CONTRACTS.md), perf as the return address, so two frames
AGREE when they name the same file and 0 <= perf - spulse <= 1 (the leaf,
and a frame interrupted by a signal, are exact in both).

Coverage (>= 95%): of the spulse samples of the workload that have at least
one user frame (samples of `spulse record`'s own fork before it exec'd the
workload, with frames in the spulse binary, are not the workload's), the share that REACH THE THREAD ENTRY: no truncated marker,
and one of the three outermost user frames symbolizes to an entry function
(_start, __libc_start_main, __libc_start_call_main, start_thread, clone3,
clone, or nofp's thread routine nf_thread_main). Symbols come from nm -S of
the file and of its build-id debug file under /usr/lib/debug (libc6-dbg),
a symbol naming only the addresses inside its size, and the ELF entry point
(named _start: Debian strips it).

Agreement with perf (>= 95%), step by step. A step is (callee frame,
caller frame): from frame a (an exact IP for the leaf, return address - 1
for callers) the unwinder found the caller's frame b. What a correct step
from a can give depends only on a's FUNCTION (its frame layout) and on the
path (which call site called it), so steps are compared by the callee's
function: func(a) is the FDE of .eh_frame that covers a (readelf
--debug-dump=frames, read here, independent of libdw and of the tables;
functions without CFI are keyed by their exact address). perf's steps are
the pairs (func(p_i), p_i+1) over consecutive resolved frames of its
samples of the workload's process; perf "stepped from" func(p_i) when such
a pair exists, and "returned to" p_i+1. A spulse sample S (its resolved
frames s0 .. sn-1, leaf first) is judged from s0 on: for each i, if perf
never stepped from func(s_i), or never returned to s_i+1 (a call site perf
did not sample), the rest of S cannot be judged (stop); else
(func(s_i), s_i+1) must be one of perf's steps, else S DISAGREES: spulse
claims that func(s_i) returns to a call site that perf saw return only
from other functions (a skipped or invented frame, a frame-pointer
fallback through a frame that has none, a bad table). If S ends in the truncated marker after s_n-1 and perf stepped
from func(s_n-1), S DISAGREES (spulse gave up where perf went on). S is
judged when perf stepped from func(s0); S AGREES when judged and not
disagreeing. Asserted over the judged samples, with at least 30 of them;
the share judged is printed, and the strict whole-chain comparison (perf
samples with the same leaf IP, chains identical over the common length,
which needs both runs to have sampled the same whole path) as INFO.
"""
import bisect
import collections
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from spool import RawSpool  # noqa: E402

ENTRY = {'_start', '__libc_start_main', '__libc_start_call_main',
         '__libc_start_main_impl', 'start_thread', 'clone3', 'clone',
         'nf_thread_main'}
COVERAGE_MIN = 0.95
STARTUP_NS = 500 * 1000 * 1000  # see workload(): a process's first 0.5 s
AGREE_MIN = 0.95
MATCHED_MIN = 30

passed = failed = 0


def check(ok, name, msg=''):
    global passed, failed
    if ok:
        passed += 1
        print('PASS %s%s' % (name, ': ' + msg if msg else ''))
    else:
        failed += 1
        print('FAIL %s%s' % (name, ': ' + msg if msg else ''))
    sys.stdout.flush()


def info(msg):
    print('INFO ' + msg)


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, errors='replace')
    return p.returncode, p.stdout, p.stderr


def read(path, default=''):
    try:
        with open(path, errors='replace') as f:
            return f.read()
    except OSError:
        return default


def rc_of(path):
    try:
        return int(read(path, '-1').strip() or -1)
    except ValueError:
        return -1


class Elf:
    """PT_LOAD segments, type, entry point and function symbols of a file."""

    def __init__(self, path):
        self.path = path
        self.loads = []
        self.fde_lo, self.fde_hi = [], []
        self.exec_type = False
        self.entry = None
        _, out, _ = run(['readelf', '-hlnW', path])
        bid = None
        for line in out.splitlines():
            p = line.split()
            if p[:1] == ['LOAD']:
                self.loads.append((int(p[1], 16), int(p[2], 16), int(p[4], 16),
                                   'E' in p[6:-1]))
            elif line.strip().startswith('Type:') and 'EXEC' in line:
                self.exec_type = True
            elif line.strip().startswith('Entry point address:'):
                self.entry = int(p[-1], 16)
            elif 'Build ID:' in line:
                bid = p[-1]
        syms = {}
        files = [path]
        if bid:
            dbg = '/usr/lib/debug/.build-id/%s/%s.debug' % (bid[:2], bid[2:])
            if os.path.exists(dbg):
                files.append(dbg)
        for f in files:
            for flag in ([], ['-D']):
                _, out, _ = run(['nm', '-n', '-S', '--defined-only'] + flag + [f])
                for line in out.splitlines():
                    p = line.split()
                    if len(p) == 4 and p[2] in 'tTwWiI':
                        a, size, name = int(p[0], 16), int(p[1], 16), p[3]
                    elif len(p) == 3 and p[1] in 'tTwWiI':
                        a, size, name = int(p[0], 16), 0, p[2]
                    else:
                        continue
                    name = name.split('@')[0]
                    if a not in syms or (not syms[a][1] and size):
                        syms[a] = (name, size)
        if self.entry is not None and self.entry not in syms:
            syms[self.entry] = ('_start', 0)
        self.addrs = sorted(syms)
        self.names = [syms[a][0] for a in self.addrs]
        self.sizes = [syms[a][1] for a in self.addrs]
        _, out, _ = run(['readelf', '--debug-dump=frames', path])
        fdes = set()
        for m in re.finditer(r' FDE cie=\S+ pc=([0-9a-f]+)\.\.([0-9a-f]+)', out):
            lo, hi = int(m.group(1), 16), int(m.group(2), 16)
            if lo < hi:
                fdes.add((lo, hi))
        for lo, hi in sorted(fdes):
            self.fde_lo.append(lo)
            self.fde_hi.append(hi)

    def func(self, off):
        """The FDE covering file offset @off, as its start vaddr, or None."""
        va = self.off_to_vaddr(off)
        if va is None:
            return None
        i = bisect.bisect_right(self.fde_lo, va) - 1
        return self.fde_lo[i] if i >= 0 and va < self.fde_hi[i] else None

    def off_to_vaddr(self, off):
        for o, v, fsz, _ in self.loads:
            if o <= off < o + fsz:
                return off - o + v
        return None

    def perf_to_off(self, v):
        """perf's map-relative value -> file offset (see the docstring)."""
        if self.exec_type:
            for o, va, fsz, x in self.loads:
                if x and va <= v < va + fsz and not (o <= v < o + fsz):
                    return v - va + o
        return v

    def name(self, off):
        """The function containing file offset @off: inside its st_size,
        or within 64 bytes of a symbol without a size (asm entry points);
        None elsewhere (a stripped file's local functions)."""
        va = self.off_to_vaddr(off)
        if va is None:
            return None
        i = bisect.bisect_right(self.addrs, va) - 1
        if i < 0:
            return None
        lim = self.sizes[i] if self.sizes[i] else 64
        return self.names[i] if va < self.addrs[i] + lim else None


_elfs = {}


def elf(path):
    if path not in _elfs:
        _elfs[path] = Elf(path) if os.path.isfile(path) else None
    return _elfs[path]


def symname(fr):
    if fr is None:
        return None
    e = elf(fr[0])
    return e.name(fr[1]) if e else None


def spulse_samples(path):
    """[(pid, tid, [frame...], truncated, t_ns)] user part, leaf first; a
    frame is (file, offset) or None (unresolved)."""
    sp = RawSpool(path)
    out = []
    for thread, stack, t_ns, _cpu in sp.samples:
        th = sp.threads[thread]
        frames, trunc = [], False
        for fr in sp.frames_of(stack):
            k = fr['kind']
            if k == '2':
                continue
            if k == '3':
                trunc = True
                break
            if k == '0':
                frames.append((sp.modules[fr['module']]['path'], fr['addr']))
            else:
                frames.append(None)
        out.append((th.get('pid'), th.get('tid'), frames, trunc, t_ns))
    return sp, out


FRAME = re.compile(r'^\s+([0-9a-f]+)\s(.*)\((.*)\)\s*$')
HEAD = re.compile(r'^\s*(\S.*?)\s+(\d+)/(\d+)\s*$')


def perf_samples(data):
    """[(pid, tid, [frame...])] user part, leaf first, from perf script."""
    rc, out, err = run(['perf', 'script', '-f', '--no-inline', '-i', data,
                        '-F', 'comm,pid,tid,ip,sym,dso'])
    if rc != 0:
        raise RuntimeError('perf script %s: rc %d: %s' % (data, rc, err[-300:]))
    res, cur = [], None
    for line in out.splitlines():
        if not line.strip():
            continue
        m = FRAME.match(line)
        if m and cur is not None:
            dso = m.group(3)
            if dso.startswith('[kernel') or dso.endswith('.ko'):
                continue
            if dso.startswith('[') or not dso.startswith('/'):
                cur[2].append(None)
                continue
            e = elf(dso)
            v = int(m.group(1), 16)
            cur[2].append((dso, e.perf_to_off(v) if e else v))
            continue
        h = HEAD.match(line)
        if h:
            cur = (int(h.group(2)), int(h.group(3)), [])
            res.append(cur)
    return res


def resolved_prefix(frames):
    n = 0
    for fr in frames:
        if fr is None:
            break
        n += 1
    return frames[:n]


def agree(s_frames, s_trunc, p_frames, leaf_exact=True):
    a = resolved_prefix(s_frames)
    b = resolved_prefix(p_frames)
    n = min(len(a), len(b))
    if n == 0:
        return False
    for i in range(n):
        if a[i][0] != b[i][0]:
            return False
        d = b[i][1] - a[i][1]
        if i == 0 and leaf_exact:
            if d != 0:
                return False
        elif not 0 <= d <= 1:
            return False
    if s_trunc and len(b) > len(a) and len(a) == len(s_frames):
        return False
    return True


def func_of(f):
    """Function identity of a frame: (file, FDE start), else the frame."""
    e = elf(f[0])
    fn = e.func(f[1]) if e else None
    return (f[0], fn) if fn is not None else f


class PerfSteps:
    """The steps perf's unwinder took, by callee function (see the
    docstring), with the return-address convention tolerance (perf -
    spulse in {0, 1}) on the caller frame."""

    def __init__(self, chains):
        self.steps, self.from_, self.to = set(), set(), set()
        for fr in chains:
            r = resolved_prefix(fr)
            for i in range(len(r) - 1):
                fa = func_of(r[i])
                self.steps.add((fa, r[i + 1]))
                self.from_.add(fa)
                self.to.add(r[i + 1])

    def returned_to(self, b):
        return b in self.to or (b[0], b[1] + 1) in self.to

    def stepped_from(self, f):
        return func_of(f) in self.from_

    def has_step(self, a, b):
        fa = func_of(a)
        return (fa, b) in self.steps or (fa, (b[0], b[1] + 1)) in self.steps

    def judge(self, frames, trunc):
        """None (not judged), True (agrees) or (False, i) (first bad step)."""
        r = resolved_prefix(frames)
        if not r or not self.stepped_from(r[0]):
            return None
        for i in range(len(r) - 1):
            if not self.stepped_from(r[i]) or not self.returned_to(r[i + 1]):
                return True
            if not self.has_step(r[i], r[i + 1]):
                return (False, i)
        if trunc and len(r) == len(frames) and self.stepped_from(r[-1]):
            return (False, len(r) - 1)
        return True


def reaches_entry(frames, trunc):
    if trunc or not frames or frames[-1] is None:
        return False
    return any(symname(fr) in ENTRY for fr in frames[-3:] if fr)


def outer_names(frames, k=4):
    return ' <- '.join(symname(fr) or ('?' if fr is None else '%s+%#x' % (
        os.path.basename(fr[0]), fr[1])) for fr in frames[-k:])


def spool_ok(out, case, path):
    try:
        sp, samples = spulse_samples(path)
    except Exception as e:  # noqa: BLE001 - any decode error is the finding
        check(False, '%s.spool_valid' % case, '%s: %s' % (path, e))
        return None, []
    rc, o, err = run([os.path.join(out, 'bin', 'spulse'), 'check', path])
    check(rc == 0 and not sp.truncated and samples, '%s.spool_valid' % case,
          '%d samples, spulse check rc %d%s' % (len(samples), rc,
                                                 '' if rc == 0 else ': ' + (o + err)[-200:]))
    return sp, samples


def workload(out, case):
    d = os.path.join(out, case)
    rlog = read(os.path.join(d, 'record.log'))
    check(rc_of(os.path.join(d, 'record.rc')) == 0 and 'exited with status' not in rlog,
          '%s.record_ok' % case, rlog.strip().splitlines()[-1] if rlog.strip() else 'no log')
    m = re.search(r'unwind tables (\d+) \(cache hits (\d+), refused (\d+), failed (\d+)\)', rlog)
    check(m is not None and int(m.group(1)) > 0, '%s.tables_loaded' % case,
          m.group(0) if m else 'no table counts in the summary')
    sp, samples = spool_ok(out, case, os.path.join(d, 'spulse.spulse'))
    if sp is None:
        return
    # samples of spulse record's own fork before it exec'd the workload
    pre = [s for s in samples if any(f and f[0].endswith('/spulse') for f in s[2])]
    if pre:
        info('%s: %d samples of the recorder\'s fork before its exec, not counted'
             % (case, len(pre)))
    user = [s for s in samples if s[2] and s not in pre]
    # A new process's first STARTUP_NS: its module records reach the
    # drainer, which then loads its tables (MAP); samples before that use
    # frame pointers, which these programs do not keep. That start-up
    # latency is reported on its own line; the unwinder's coverage is
    # judged on the rest.
    first = {}
    for x in user:
        first[x[0]] = min(first.get(x[0], x[4]), x[4])
    early = [x for x in user if x[4] - first[x[0]] < STARTUP_NS]
    if early:
        er = sum(1 for x in early if reaches_entry(x[2], x[3]))
        info('%s start-up: %d samples in each process\'s first %.1f s (before its '
             'tables can be loaded), %d (%.1f%%) reach the entry; not counted below'
             % (case, len(early), STARTUP_NS / 1e9, er, 100.0 * er / len(early)))
    user = [x for x in user if x[4] - first[x[0]] >= STARTUP_NS]
    reached = [s for s in user if reaches_entry(s[2], s[3])]
    cov = len(reached) / len(user) if user else 0.0
    check(len(user) >= 50 and cov >= COVERAGE_MIN, '%s.coverage' % case,
          '%d of %d user-mode samples (%.1f%%) reach the thread entry (>= %.0f%%)'
          % (len(reached), len(user), 100 * cov, 100 * COVERAGE_MIN))
    miss = collections.Counter(
        ('truncated: ' if s[3] else 'ends: ') + outer_names(s[2])
        for s in user if not reaches_entry(s[2], s[3]))
    for k, n in miss.most_common(4):
        info('%s not reaching the entry: %d x %s' % (case, n, k))
    depth = sorted(len(s[2]) for s in user)
    if depth:
        info('%s user depth: median %d, max %d' % (case, depth[len(depth) // 2], depth[-1]))

    # against perf --call-graph dwarf
    prc = rc_of(os.path.join(d, 'perf.rc'))
    try:
        ps = perf_samples(os.path.join(d, 'perf.data')) if prc == 0 else []
    except RuntimeError as e:
        ps = []
        info(str(e))
    ps = [p for p in ps if p[2] and p[2][0] is not None]
    if not ps:
        check(False, '%s.perf_agreement' % case, 'perf record rc %d, no perf samples' % prc)
        return
    pids = collections.Counter(p[0] for p in ps)
    main_pid = pids.most_common(1)[0][0]
    by_leaf = collections.defaultdict(list)
    for p in ps:
        if p[0] == main_pid:
            by_leaf[p[2][0]].append(p)
    steps = PerfSteps(p[2] for p in ps if p[0] == main_pid)
    judged = agreed = 0
    bad = collections.Counter()
    for s in user:
        v = steps.judge(s[2], s[3])
        if v is None:
            continue
        judged += 1
        if v is True:
            agreed += 1
            continue
        i = v[1]
        r = resolved_prefix(s[2])
        nxt = ('%s+%#x %s' % (os.path.basename(r[i + 1][0]), r[i + 1][1], symname(r[i + 1]))
               if i + 1 < len(r) else '[truncated]')
        bad['from %s+%#x %s to %s' % (os.path.basename(r[i][0]), r[i][1], symname(r[i]),
                                      nxt)] += 1
    rate = agreed / judged if judged else 0.0
    check(judged >= MATCHED_MIN and rate >= AGREE_MIN, '%s.perf_agreement' % case,
          '%d of %d judged spulse samples take only steps perf took (%.1f%%, >= %.0f%%); '
          '%d spulse samples (%d judged), %d perf samples'
          % (agreed, judged, 100 * rate, 100 * AGREE_MIN, len(user), judged, len(ps)))
    for k, n in bad.most_common(3):
        info('%s step perf never took: %d x %s' % (case, n, k))
    matched = whole = 0
    for s in user:
        cands = by_leaf.get(s[2][0]) if s[2][0] is not None else None
        if cands:
            matched += 1
            whole += any(agree(s[2], s[3], p[2]) for p in cands)
    info('%s whole-chain comparison: %d of %d samples with a perf sample of the same leaf '
         'have an identical chain over the common length' % (case, whole, matched))
    preached = sum(1 for p in ps if p[0] == main_pid and
                   any(symname(fr) in ENTRY for fr in resolved_prefix(p[2])[-3:]))
    info('%s perf dwarf: %d of %d samples reach the entry' %
         (case, preached, sum(1 for p in ps if p[0] == main_pid)))
    st = os.path.getsize(os.path.join(d, 'spulse.spulse'))
    pt = os.path.getsize(os.path.join(d, 'perf.data'))
    info('%s bytes/sample: spulse %.1f, perf dwarf %.0f' %
         (case, st / max(1, len(samples)), pt / max(1, len(ps))))


def stats_of(path):
    st = {}
    for line in read(path).splitlines():
        p = line.split()
        if len(p) == 2:
            try:
                st[p[0]] = int(p[1])
            except ValueError:
                st[p[0]] = p[1]
    return st


def fp_mode(out):
    d = os.path.join(out, 'fp')
    rlog = read(os.path.join(d, 'record.log'))
    check(rc_of(os.path.join(d, 'record.rc')) == 0 and 'unwind tables' not in rlog,
          'fp.record_ok_no_tables', rlog.strip().splitlines()[-1] if rlog.strip() else 'no log')
    sp, samples = spool_ok(out, 'fp', os.path.join(d, 'spulse.spulse'))
    if sp is None:
        return
    user = [s for s in samples if s[2]]
    reached = sum(1 for s in user if reaches_entry(s[2], s[3]))
    short = sum(1 for s in user if s[3] and len(s[2]) <= 3)
    check(user and reached <= 0.05 * len(user) and short >= 0.9 * len(user),
          'fp.old_behaviour',
          'unwind=fp on FP-less code: %d of %d samples reach the entry (<= 5%%), %d '
          'truncated within 3 user frames (>= 90%%)' % (reached, len(user), short))


def badsp(out):
    d = os.path.join(out, 'badsp')
    check(rc_of(os.path.join(d, 'record.rc')) == 0, 'badsp.record_ok',
          read(os.path.join(d, 'record.log')).strip()[-200:])
    sp, samples = spool_ok(out, 'badsp', os.path.join(d, 'spulse.spulse'))
    if sp is None:
        return
    inbad = [s for s in samples if s[2] and symname(s[2][0]) == 'nf_badsp']
    honest = [s for s in inbad if s[3] and len(s[2]) == 1]
    check(len(inbad) >= 3 and len(honest) == len(inbad), 'badsp.honest_truncation',
          '%d samples in nf_badsp (rsp/rbp at garbage), %d of them leaf + truncated marker'
          % (len(inbad), len(honest)))
    user = [s for s in samples if s[2] and s not in inbad]
    reached = sum(1 for s in user if reaches_entry(s[2], s[3]))
    info('badsp: the other %d user-mode samples: %d reach the entry' % (len(user), reached))


def refuse(out):
    d = os.path.join(out, 'refuse')
    rlog = read(os.path.join(d, 'record.log'))
    check(rc_of(os.path.join(d, 'bind.rc')) == 0, 'refuse.setup_bind_mount')
    ok = re.search(r'/h/nofp: build-id on disk \S+ differs from the mapped file\'s \S+; '
                   r'table refused', rlog) is not None
    m = re.search(r'unwind tables (\d+) \(cache hits \d+, refused (\d+), failed (\d+)\)', rlog)
    check(ok and m is not None and int(m.group(2)) == 1 and rlog.count('table refused') == 1,
          'refuse.wrong_build_id_refused_once',
          (m.group(0) if m else 'no counts') + '; ' +
          '; '.join(l for l in rlog.splitlines() if 'refused' in l)[:300])
    check(rc_of(os.path.join(d, 'record.rc')) == 0, 'refuse.record_ok', rlog.strip()[-200:])
    spool_ok(out, 'refuse', os.path.join(d, 'spulse.spulse'))


def poked(out, case, want, used=True):
    d = os.path.join(out, case)
    plog = read(os.path.join(d, 'poke.log'))
    for w in want:
        check(re.search(r'^%s: ok$' % w, plog, re.M) is not None,
              '%s.%s_accepted' % (case, w), plog.strip().replace('\n', '; ')[:300])
    check(rc_of(os.path.join(d, 'insmod.rc')) == 0 and rc_of(os.path.join(d, 'drain.rc')) == 0
          and rc_of(os.path.join(d, 'rmmod.rc')) == 0, '%s.module_and_drainer_ok' % case,
          'insmod %d drain %d rmmod %d: %s' % (
              rc_of(os.path.join(d, 'insmod.rc')), rc_of(os.path.join(d, 'drain.rc')),
              rc_of(os.path.join(d, 'rmmod.rc')),
              read(os.path.join(d, 'insmod.err')).strip()[:200]))
    st = stats_of(os.path.join(d, 'stats'))
    sp, samples = spool_ok(out, case, os.path.join(d, 'spulse.spulse'))
    steps = st.get('ustack_table_steps', -1)
    msg = ('ustack_table_steps %s, ustack_fp_steps %s, ustack_complete %s, ustack_truncated %s'
           % (steps, st.get('ustack_fp_steps'), st.get('ustack_complete'),
              st.get('ustack_truncated')))
    if used:
        check(isinstance(steps, int) and steps > 0, '%s.tables_used' % case, msg)
    else:
        info('%s: %s' % (case, msg))
    return st, samples


def main():
    out, result = sys.argv[1], sys.argv[2]
    ec = read(os.path.join(out, 'exit-code')).strip()
    check(ec == '0', 'vm.guest_script_ran', 'exit code %r' % ec)
    for case in ('py', 'xz', 'gzip', 'nofp'):
        try:
            workload(out, case)
        except Exception as e:  # noqa: BLE001
            check(False, '%s.checker' % case, repr(e))
    for fn in (fp_mode, badsp, refuse):
        try:
            fn(out)
        except Exception as e:  # noqa: BLE001
            check(False, '%s.checker' % fn.__name__, repr(e))
    try:
        # a wrong or lying table may fail at the first step (no table
        # step counted): what matters is that the walk stops there
        st, samples = poked(out, 'forced', ['add', 'map'], used=False)
        trunc = sum(1 for s in samples if s[3])
        check(trunc >= 0.9 * len(samples) and st.get('ustack_fp_steps', -1) == 0,
              'forced.wrong_table_truncates',
              '%d of %d samples truncated, ustack_truncated %s, ustack_fp_steps %s '
              '(unwind=tables: never the frame-pointer step)' %
              (trunc, len(samples), st.get('ustack_truncated'), st.get('ustack_fp_steps')))
        st, samples = poked(out, 'lie', ['lie', 'map'], used=False)
        trunc = sum(1 for s in samples if s[3])
        check(trunc >= 0.5 * len(samples), 'lie.lying_table_truncates',
              '%d of %d samples truncated, ustack_truncated %s' %
              (trunc, len(samples), st.get('ustack_truncated')))
        st, samples = poked(out, 'churn', [])
        m = re.search(r'churn: (\d+) rounds, (\d+) refusals', read(os.path.join(out, 'churn',
                                                                                 'poke.log')))
        check(m is not None and int(m.group(1)) >= 10, 'churn.tables_removed_while_sampling',
              m.group(0) if m else read(os.path.join(out, 'churn', 'poke.log'))[:200])
    except Exception as e:  # noqa: BLE001
        check(False, 'hostile.checker', repr(e))
    dm = read(os.path.join(out, 'dmesg.txt')) or read(os.path.join(out, 'dmesg.guest'))
    bad = [l for l in dm.splitlines()
           if re.search(r'BUG:|WARNING:|Oops|general protection|Call Trace|'
                        r'unable to handle|segfault at|KASAN|UBSAN', l)]
    check(dm != '' and not bad, 'vm.dmesg_clean', '; '.join(bad[:3]) if bad else
          '%d lines' % len(dm.splitlines()))
    with open(result, 'w') as f:
        f.write('%d %d\n' % (passed, failed))
    print('unwind-vm checks: %d passed, %d failed' % (passed, failed))


if __name__ == '__main__':
    main()

"""Load a SPULSE spool through `spulse dump` and symbolize its stacks.

Host-side helper of the e2e checkers: user frames of a static workload are
symbolized with `nm` + the program headers (`readelf -lW`) of the binary,
kernel frames with a /proc/kallsyms text file.
"""
import bisect
import re
import subprocess

KV = re.compile(r'(\w+)=(\S*)')
KINDS = ('module', 'frame', 'stack', 'thread', 'sample')


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, errors='replace')
    return p.returncode, p.stdout, p.stderr


class Spool:
    """Records of one spool: modules, frames, stacks, threads, samples."""

    def __init__(self, spulse, path):
        rc, out, err = run([spulse, 'dump', path])
        if rc != 0:
            raise RuntimeError('spulse dump %s: rc %d: %s' % (path, rc, err.strip()))
        self.modules, self.frames, self.stacks, self.threads = {}, {}, {}, {}
        self.samples = []
        for line in out.splitlines():
            toks = line.split()
            kind = next((t for t in toks[:3] if t in KINDS), None)
            if kind is None:
                continue
            f = dict(KV.findall(line))
            if kind == 'module':
                self.modules[int(f['id'])] = dict(
                    pid=int(f['pid']), start=int(f['start'], 16),
                    end=int(f['end'], 16), off=int(f['file_offset'], 16),
                    path=f.get('path', ''))
            elif kind == 'frame':
                fr = dict(kind=f['kind'])
                if 'rel' in f:
                    fr['module'] = int(f['module'])
                    fr['addr'] = int(f['rel'], 16)
                elif 'addr' in f:
                    fr['addr'] = int(f['addr'], 16)
                self.frames[int(f['id'])] = fr
            elif kind == 'stack':
                par = f['parent']
                self.stacks[int(f['id'])] = (None if par == 'root' else int(par),
                                             int(f['frame']))
            elif kind == 'thread':
                self.threads[int(f['id'])] = dict(pid=int(f['pid']), tid=int(f['tid']),
                                                  comm=f.get('comm', ''))
            elif kind == 'sample':
                self.samples.append((int(f['thread']), int(f['stack'])))

    def frames_of(self, stack):
        """Frame records of a stack, leaf (innermost) first."""
        out = []
        while stack is not None:
            parent, frame = self.stacks[stack]
            out.append(self.frames[frame])
            stack = parent
        return out


def is_kernel(fr):
    return fr['kind'].startswith('kernel') or fr['kind'] in ('2', 'abs-kernel')


def is_truncated(fr):
    return fr['kind'].startswith('trunc') or fr['kind'] == '3'


class ElfSyms:
    """Function symbols and LOAD segments of a static (non-PIE) binary."""

    def __init__(self, path):
        self.path = path
        _, out, _ = run(['nm', '-n', '--defined-only', path])
        self.addrs, self.names = [], []
        for line in out.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] in 'tTwW':
                self.addrs.append(int(p[0], 16))
                self.names.append(p[2])
        _, out, _ = run(['readelf', '-lW', path])
        self.loads = []  # (offset, vaddr, filesz, memsz, flags)
        for line in out.splitlines():
            p = line.split()
            if p and p[0] == 'LOAD':
                self.loads.append((int(p[1], 16), int(p[2], 16), int(p[4], 16),
                                   int(p[5], 16), ' '.join(p[6:-1])))

    def text_range(self):
        exe = [l for l in self.loads if 'E' in l[4]]
        return min(l[1] for l in exe), max(l[1] + l[3] for l in exe)

    def rel_to_vaddr(self, rel):
        for off, vaddr, filesz, _, _ in self.loads:
            if off <= rel < off + filesz:
                return rel - off + vaddr
        return None

    def name(self, vaddr):
        if vaddr is None:
            return None
        i = bisect.bisect_right(self.addrs, vaddr) - 1
        return self.names[i] if i >= 0 else None


class Kallsyms:
    def __init__(self, path):
        self.addrs, self.names = [], []
        rows = []
        with open(path, errors='replace') as f:
            for line in f:
                p = line.split()
                if len(p) >= 3 and p[1] in 'tTwW':
                    rows.append((int(p[0], 16), p[2]))
        rows.sort()
        self.addrs = [r[0] for r in rows]
        self.names = [r[1] for r in rows]

    def name(self, addr):
        i = bisect.bisect_right(self.addrs, addr) - 1
        return self.names[i] if i >= 0 and self.addrs[i] else None


# ---------------------------------------------------------------------------
# An independent reader of the binary format (docs/FORMAT.md), used by the
# latency suite: it does not go through libspulse or `spulse dump`, so a
# shared bug there cannot hide a wrong record. Parses tags 1-9, validates
# extension kinds 1-3 (section 3.10) and skips the others by length.

MAGIC = b'SPULSE3\0'
EXT_MAX_LEN = 4096
MAX_CPU = 65536
STATE_NAMES = 'RSDTtXZPI'


class SpoolError(ValueError):
    def __init__(self, off, msg):
        ValueError.__init__(self, 'offset %d: %s' % (off, msg))
        self.off = off


class _Cut(Exception):
    """The file ends inside a record (a truncated tail, not corruption)."""


class _Rd:
    def __init__(self, b, pos=0, end=None):
        self.b, self.pos = b, pos
        self.end = len(b) if end is None else end

    def u8(self):
        if self.pos >= self.end:
            raise _Cut()
        v = self.b[self.pos]
        self.pos += 1
        return v

    def uvar(self, limit=(1 << 64) - 1, what='value'):
        start, v, shift = self.pos, 0, 0
        for i in range(10):
            c = self.u8()
            if i == 9 and c > 1:
                raise SpoolError(start, 'overflowing varint')
            v |= (c & 0x7f) << shift
            shift += 7
            if not c & 0x80:
                if i > 0 and c == 0:
                    raise SpoolError(start, 'overlong varint')
                if v > limit:
                    raise SpoolError(start, '%s out of range' % what)
                return v
        raise SpoolError(start, 'overflowing varint')

    def svar(self):
        u = self.uvar()
        return (u >> 1) ^ -(u & 1)

    def blob(self, limit, what):
        start = self.pos
        n = self.uvar()
        if n > limit:
            raise SpoolError(start, '%s longer than %d' % (what, limit))
        if self.pos + n > self.end:
            raise _Cut()
        v = self.b[self.pos:self.pos + n]
        self.pos += n
        return v


class RawSpool:
    """Every record of one SPULSE stream or spool, decoded from its bytes.

    Attributes: start_us, interval_us; modules, frames, stacks, threads
    (dicts by id, same shapes as Spool's); samples: (thread, stack, t_ns,
    cpu) with t_ns the offset from the profile start and cpu None before the
    first cpu record; cpu_records; offcpu: dicts (t_out, thread, stack,
    state, cpu_out, cpu_in, blocked_ns, runq_ns, waker (thread id or None),
    waker_stack, waker_cpu); triggers: dicts; ext_skipped; truncated (the
    file ends inside a record)."""

    def __init__(self, path=None, data=None):
        b = data if data is not None else open(path, 'rb').read()
        self.path = path
        self.modules, self.frames, self.stacks, self.threads = {}, {}, {}, {}
        self.active = set()
        self.depth = {}
        self.samples, self.offcpu, self.triggers = [], [], []
        self.cpu_records = 0
        self.ext_skipped = 0
        self.truncated = False
        if len(b) < 8:
            if b != MAGIC[:len(b)]:
                raise SpoolError(0, 'bad magic')
            self.truncated = True
            self.start_us = self.interval_us = 0
            return
        if b[:8] != MAGIC:
            raise SpoolError(0, 'bad magic')
        r = _Rd(b, 8)
        try:
            self.start_us = r.uvar()
            self.interval_us = r.uvar()
        except _Cut:
            self.truncated = True
            return
        self._t = 0		# sample clock
        self._ev = 0		# event clock
        self._cpu = None
        while r.pos < len(b):
            rec = r.pos
            try:
                self._record(r, rec)
            except _Cut:
                self.truncated = True
                break

    def _dense(self, table, off, id_, what):
        n = len(table)
        if id_ < n:
            raise SpoolError(off, 'duplicate %s id %d' % (what, id_))
        if id_ > n:
            raise SpoolError(off, 'gap (non-dense %s id %d, expected %d)' % (what, id_, n))

    def _ref(self, table, off, id_, what):
        if id_ not in table:
            raise SpoolError(off, 'undefined %s %d' % (what, id_))

    def _record(self, r, rec):
        tag = r.u8()
        u32 = 0xffffffff
        if tag == 1:
            o = r.pos
            i = r.uvar(u32, 'module id')
            self._dense(self.modules, o, i, 'module')
            pid = r.uvar(u32, 'pid')
            start, end, off = r.uvar(), r.uvar(), r.uvar()
            path = r.blob(4096, 'path').decode('utf-8', 'replace')
            r.blob(64, 'build-id')
            if start >= end:
                raise SpoolError(o, 'module start >= end')
            self.modules[i] = dict(pid=pid, start=start, end=end, off=off, path=path)
            self.active.add(i)
        elif tag == 2:
            o = r.pos
            i = r.uvar(u32, 'frame id')
            self._dense(self.frames, o, i, 'frame')
            ko = r.pos
            kind = r.u8()
            if kind == 0:
                mo = r.pos
                m = r.uvar(u32, 'module')
                self._ref(self.modules, mo, m, 'module')
                rel = r.uvar()
                md = self.modules[m]
                if m not in self.active:
                    raise SpoolError(mo, 'frame names a deactivated module')
                if not (md['off'] <= rel and rel - md['off'] < md['end'] - md['start']):
                    raise SpoolError(mo, "reference outside the module's mapped span")
                self.frames[i] = dict(kind='0', module=m, addr=rel)
            elif kind in (1, 2):
                self.frames[i] = dict(kind=str(kind), addr=r.uvar())
            elif kind == 3:
                self.frames[i] = dict(kind='3')
            else:
                raise SpoolError(ko, 'unknown frame kind %d' % kind)
        elif tag == 3:
            o = r.pos
            i = r.uvar(u32, 'stack id')
            self._dense(self.stacks, o, i, 'stack')
            po = r.pos
            par = r.uvar()
            fo = r.pos
            fr = r.uvar(u32, 'frame')
            if par:
                self._ref(self.stacks, po, par - 1, 'parent stack')
            self._ref(self.frames, fo, fr, 'frame')
            if par and self.frames[fr]['kind'] == '3':
                raise SpoolError(fo, 'truncated marker below the root')
            d = 1 + (self.depth[par - 1] if par else 0)
            if d > 1024:
                raise SpoolError(o, 'stack deeper than 1024')
            self.depth[i] = d
            self.stacks[i] = (par - 1 if par else None, fr)
        elif tag == 4:
            o = r.pos
            i = r.uvar(u32, 'thread id')
            self._dense(self.threads, o, i, 'thread')
            pid, tid = r.uvar(u32, 'pid'), r.uvar(u32, 'tid')
            comm = r.blob(4096, 'comm').decode('utf-8', 'replace')
            self.threads[i] = dict(pid=pid, tid=tid, comm=comm)
        elif tag == 5:
            o = r.pos
            dt = r.svar()
            to = r.pos
            th = r.uvar(u32, 'thread')
            so = r.pos
            st = r.uvar(u32, 'stack')
            self._ref(self.threads, to, th, 'thread')
            self._ref(self.stacks, so, st, 'stack')
            t = self._t + dt
            if t < 0:
                raise SpoolError(o, 'sample before profile start')
            if t >= 1 << 63:
                raise SpoolError(o, 'sample time overflows')
            self._t = t
            self.samples.append((th, st, t, self._cpu))
        elif tag == 6:
            r.uvar(u32, 'pid')
            so = r.pos
            if r.u8() > 1:
                raise SpoolError(so, 'bad python state')
        elif tag == 7:
            pid = r.uvar(u32, 'pid')
            self.active -= {m for m in self.active if self.modules[m]['pid'] == pid}
        elif tag == 8:
            o = r.pos
            m = r.uvar(u32, 'module')
            self._ref(self.modules, o, m, 'module')
            if m not in self.active:
                raise SpoolError(o, 'module already inactive')
            self.active.discard(m)
        elif tag == 9:
            ko = r.pos
            kind = r.uvar(u32, 'extension kind')
            if kind == 0:
                raise SpoolError(ko, 'extension kind 0 is reserved')
            lo = r.pos
            n = r.uvar()
            if n > EXT_MAX_LEN:
                raise SpoolError(lo, 'extension payload longer than %d' % EXT_MAX_LEN)
            if r.pos + n > len(r.b):
                raise _Cut()
            end = r.pos + n
            if kind > 3:
                self.ext_skipped += 1
                r.pos = end
                return
            p = _Rd(r.b, r.pos, end)
            try:
                if kind == 1:
                    self._ext_cpu(p)
                elif kind == 2:
                    self._ext_offcpu(p)
                else:
                    self._ext_trigger(p)
            except _Cut:
                raise SpoolError(p.pos, 'extension payload length mismatch (field runs past len)')
            if p.pos != end:
                raise SpoolError(p.pos, 'extension payload length mismatch (%d bytes left)'
                                 % (end - p.pos))
            r.pos = end
        else:
            raise SpoolError(rec, 'unknown record tag %d' % tag)

    def _cpu_field(self, p, what):
        return p.uvar(MAX_CPU - 1, what)

    def _ext_cpu(self, p):
        self._cpu = self._cpu_field(p, 'cpu')
        self.cpu_records += 1

    def _event_time(self, p):
        o = p.pos
        t = self._ev + p.svar()
        if t < 0:
            raise SpoolError(o, 'event before profile start')
        if t >= 1 << 63:
            raise SpoolError(o, 'event time overflows')
        self._ev = t
        return t, o

    def _ext_offcpu(self, p):
        u32 = 0xffffffff
        t, o = self._event_time(p)
        to = p.pos
        th = p.uvar(u32, 'thread')
        self._ref(self.threads, to, th, 'thread')
        so = p.pos
        st = p.uvar(u32, 'stack')
        self._ref(self.stacks, so, st, 'stack')
        state = p.uvar(8, 'state')
        cout = self._cpu_field(p, 'cpu_out')
        cin = self._cpu_field(p, 'cpu_in')
        bo = p.pos
        blocked, runq = p.uvar(), p.uvar()
        wo = p.pos
        waker = p.uvar(u32 + 1, 'waker')
        ws = wc = None
        if waker:
            self._ref(self.threads, wo, waker - 1, 'waker thread')
            wso = p.pos
            ws = p.uvar(u32, 'waker stack')
            self._ref(self.stacks, wso, ws, 'waker stack')
            wc = self._cpu_field(p, 'waker_cpu')
        if blocked + runq >= 1 << 64 or t + blocked + runq >= 1 << 63:
            raise SpoolError(bo, 'off-CPU interval overflows')
        if state == 0 and (blocked or waker):
            raise SpoolError(bo if blocked else wo, 'preempted (R) interval with blocked time or waker')
        self.offcpu.append(dict(t_out=t, thread=th, stack=st, state=state,
                                cpu_out=cout, cpu_in=cin, blocked_ns=blocked,
                                runq_ns=runq, waker=waker - 1 if waker else None,
                                waker_stack=ws, waker_cpu=wc))

    def _ext_trigger(self, p):
        u32 = 0xffffffff
        t, o = self._event_time(p)
        ro = p.pos
        reason = p.uvar(u32, 'reason')
        if not 1 <= reason <= 4:
            raise SpoolError(ro, 'bad trigger reason %d' % reason)
        seq = p.uvar(u32, 'seq')
        value, thr = p.uvar(), p.uvar()
        wo = p.pos
        ws, we = p.uvar(), p.uvar()
        if ws > we:
            raise SpoolError(wo, 'trigger window start > end')
        text = p.blob(256, 'trigger text').decode('utf-8', 'replace')
        self.triggers.append(dict(t=t, reason=reason, seq=seq, value_ns=value,
                                  threshold_ns=thr, window_start_ns=ws,
                                  window_end_ns=we, text=text))

    def frames_of(self, stack):
        out = []
        while stack is not None:
            parent, frame = self.stacks[stack]
            out.append(self.frames[frame])
            stack = parent
        return out

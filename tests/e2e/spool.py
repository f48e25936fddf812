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

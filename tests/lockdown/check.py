#!/usr/bin/env python3
"""Host-side checker of suite lockdown (tests/lockdown/run.sh): reads what
the signing step and the two boots left in OUTDIR, prints one line per
assertion ("PASS name" / "FAIL name: why") and writes "PASSED FAILED" to
RESULT.

usage: check.py OUTDIR BUILD RESULT
"""
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'e2e'))
from verdict import BAD_DMESG, Verdict  # noqa: E402

OUT, BUILD, RESULT = sys.argv[1:4]
SPULSE = os.path.join(BUILD, 'spulse')
DRAIN = os.path.join(BUILD, 'spulse-drain')
V = Verdict(OUT, why_on_pass=False)
info, rd = V.info, V.rd


def check(name, ok, why=''):
    return V.check(name, bool(ok), str(why))
IFACE_LINE = 'interface procfs /proc/spulse (debugfs: kernel lockdown)'


def log_has(boot, line):
    return line in (rd(boot, 'guest.log', default='') or '').splitlines()


def probe(boot, name):
    """{path: (r, w)} from a probe.py output file."""
    res = {}
    for line in (rd(boot, name, default='') or '').splitlines():
        m = re.match(r'(\S+) r=(\S+) w=(\S+)$', line)
        if m:
            res[m.group(1)] = (m.group(2), m.group(3))
    return res


def stats_of(boot, name):
    st, cpus = {}, {}
    for line in (rd(boot, name, default='') or '').splitlines():
        kv = line.split()
        m = re.match(r'(cpu\d+) taken \d+ written \d+ dropped \d+ bytes (\d+) '
                     r'published (\d+) read (\d+)$', line)
        if m:
            cpus[m.group(1)] = tuple(int(x) for x in m.group(2, 3, 4))
        elif len(kv) == 2:
            st[kv[0]] = int(kv[1]) if kv[1].lstrip('-').isdigit() else kv[1]
    return st, cpus


def parts(boot, name):
    """{file: (start, read, size)} from a rawread.py log."""
    res = {}
    for line in (rd(boot, name, default='') or '').splitlines():
        m = re.match(r'(cpu\d+|meta) start (\d+) read (\d+) size (\d+)$', line)
        if m:
            res[m.group(1)] = tuple(int(x) for x in m.group(2, 3, 4))
    return res


def check_json(path):
    try:
        p = subprocess.run([SPULSE, 'check', '--json', path], capture_output=True,
                           text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, str(e)
    try:
        return (json.loads(p.stdout) if p.returncode == 0 else None), \
            (p.stdout + p.stderr).strip()[-300:]
    except ValueError:
        return None, p.stdout[-300:]


def dmesg_clean(boot):
    d = rd(boot, 'dmesg', default='') or ''
    bad = [ln for ln in d.splitlines() if BAD_DMESG.search(ln)]
    check('%s: no kernel warning in dmesg' % boot, bool(d) and not bad,
          'no dmesg' if not d else '; '.join(bad[:3]))


# ---- 1. signing --------------------------------------------------------
sl = rd('sign.log', default='') or ''
check('sign: a copy signed with a throw-away key (sign-file), modinfo shows '
      'signer, sig_hashalgo and sig_key', 'sign rc=0' in sl and 'sign: ok' in sl,
      sl[-300:])

# ---- 2. boot 1: one session through debugfs, then /proc/spulse ---------
B = 'switch'
check('switch: insmod', log_has(B, 'ld: insmod rc=0'))
ls = rd(B, 'proc.ls', default='') or ''
modes = {}
for line in ls.splitlines():
    w = line.split()
    if len(w) >= 9:
        modes[w[-1]] = (w[0], w[2], w[3])
want = {'control': '-rw-------', 'unwind': '-rw-------', 'stats': '-r--------',
        'meta': '-r--------', 'cpu0': '-r--------', 'cpu1': '-r--------'}
check('switch: /proc/spulse files and modes (0600 control/unwind, 0400 the rest, root)',
      all(modes.get(n, ('?',))[0] == m and modes[n][1:] == ('0', '0') for n, m in want.items()),
      ls.replace('\n', ' | ')[:400])
before = probe(B, 'debugfs.before')
check('switch: before lockdown debugfs opens control, cpu0, meta, unwind, stats',
      len(before) == 5 and all(r == 'ok' for r, _ in before.values()), str(before))
gl = rd(B, 'guest.log', default='') or ''
check('switch: lockdown raised to integrity at run time',
      log_has(B, 'ld: raise rc=0') and re.search(r'^ld: lockdown .*\[integrity\]', gl, re.M),
      re.findall(r'^ld: (?:raise|lockdown).*', gl, re.M))
after = probe(B, 'debugfs.after')
refused = {p: r for p, (r, _) in after.items() if not p.endswith('/stats')}
check('switch: under lockdown debugfs refuses control, cpu0, meta, unwind with EPERM',
      len(refused) == 4 and all(r == 'EPERM' for r in refused.values()), str(after))
check('switch: under lockdown debugfs stats still opens (read-only, no mmap)',
      after.get('/sys/kernel/debug/spulse/stats', ('?',))[0] == 'ok', str(after))
pr = probe(B, 'proc.root')
check('switch: under lockdown root opens every /proc/spulse file',
      len(pr) == 6 and all(r == 'ok' for r, _ in pr.values()), str(pr))
pn = probe(B, 'proc.nobody')
check('switch: nobody gets EACCES opening every /proc/spulse file (read and write)',
      len(pn) == 6 and all(r == 'EACCES' and w == 'EACCES' for r, w in pn.values()),
      str(pn) or rd(B, 'proc.nobody'))
p2 = probe(B, 'proc2.probe')
check('switch: another procfs mount refuses a relay twin (EXDEV), serves stats',
      p2.get('/tmp/proc2/spulse/cpu0', ('?',))[0] == 'EXDEV' and
      p2.get('/tmp/proc2/spulse/stats', ('?',))[0] == 'ok', str(p2))

p1, p2r = parts(B, 'part1.log'), parts(B, 'part2.log')
check('switch: part 1 read through debugfs', log_has(B, 'ld: part1 rc=0') and
      set(p1) >= {'cpu0', 'cpu1', 'meta'} and sum(v[1] for v in p1.values()) > 0,
      rd(B, 'part1.log'))
check('switch: part 2 read through /proc/spulse', log_has(B, 'ld: part2 rc=0') and
      set(p2r) == set(p1) and all(p2r[n][1] > 0 for n in p2r if n.startswith('cpu')),
      rd(B, 'part2.log'))
check('switch: part 2 of every file starts where part 1 stopped (stats read position)',
      bool(p1) and all(n in p2r and p2r[n][0] == p1[n][0] + p1[n][1] for n in p1),
      'part1 %s part2 %s' % (p1, p2r))
st, cpus = stats_of(B, 'stats.final')
check('switch: stopped at the end', st.get('state') == 'stopped', 'state %s' % st.get('state'))
lost = {}
for n, (b, pub, r) in cpus.items():
    got = p1.get(n, (0, 0, 0))[1] + p2r.get(n, (0, 0, 0))[1]
    if not (b == pub == r == got):
        lost[n] = 'bytes %d published %d read %d, parts %d' % (b, pub, r, got)
check('switch: every cpuN byte the module wrote was read once (part 1 + part 2 = bytes)',
      bool(cpus) and not lost and set(cpus) == {n for n in p1 if n.startswith('cpu')},
      str(lost or cpus))
mgot = p1.get('meta', (0, 0, 0))[1] + p2r.get('meta', (0, 0, 0))[1]
check('switch: every meta byte read once (part 1 + part 2 = meta_published = meta_read)',
      st.get('meta_published') == st.get('meta_read') == mgot and mgot > 0,
      'meta_published %s meta_read %s parts %d' % (st.get('meta_published'),
                                                    st.get('meta_read'), mgot))
# the two parts, joined, are whole streams: spulse-drain reads them as
# stand-in files, checks the byte counts against the stats, and the spool
# holds every sample and off-CPU interval the module wrote
sd = os.path.join(OUT, B, 'standin')
shutil.rmtree(sd, ignore_errors=True)
os.makedirs(sd)
for n in p1:
    with open(os.path.join(sd, n), 'wb') as f:
        for tag in ('part1', 'part2'):
            try:
                with open(os.path.join(OUT, B, 'raw', '%s.%s' % (n, tag)), 'rb') as g:
                    f.write(g.read())
            except OSError:
                pass
try:
    shutil.copy(os.path.join(OUT, B, 'stats.final'), os.path.join(sd, 'stats'))
except OSError:
    pass
spool = os.path.join(OUT, B, 'switch.spulse')
dr = subprocess.run([DRAIN, '--debugfs', sd, '--once', '--no-kallsyms', '--no-unwind-tables',
                     '-o', spool], capture_output=True, text=True, timeout=300)
check('switch: spulse-drain reads the joined parts: exit 0, no relay gap',
      dr.returncode == 0 and 'relay delivered' not in dr.stderr,
      'rc %d: %s' % (dr.returncode, dr.stderr.strip()[-300:]))
j, why = check_json(spool)
check('switch: the spool passes spulse check', j is not None, why)
j = j or {}
check('switch: spool samples = the module\'s samples_written (nothing lost at the switch)',
      j.get('samples', -1) == st.get('samples_written', -2) and j.get('samples', 0) > 0,
      'spool %s, samples_written %s' % (j.get('samples'), st.get('samples_written')))
check('switch: spool off-CPU intervals = the module\'s offcpu_written',
      j.get('offcpu', -1) == st.get('offcpu_written', -2) and j.get('offcpu', 0) > 0,
      'spool %s, offcpu_written %s' % (j.get('offcpu'), st.get('offcpu_written')))
dl = rd(B, 'drain.log', default='') or ''
check('switch: spulse-drain --verbose picks /proc/spulse by itself and says so',
      ('spulse-drain: ' + IFACE_LINE) in dl, dl[-300:])
check('switch: rmmod under lockdown, /proc/spulse gone',
      log_has(B, 'ld: rmmod rc=0') and log_has(B, 'ld: /proc/spulse gone'))
dmesg_clean(B)

# ---- 3. boot 2: spulse record under lockdown ---------------------------
B = 'record'
gl = rd(B, 'guest.log', default='') or ''
check('record: insmod, then lockdown raised',
      log_has(B, 'ld: insmod rc=0') and log_has(B, 'ld: raise rc=0') and
      re.search(r'^ld: lockdown .*\[integrity\]', gl, re.M), gl[:300])
after = probe(B, 'debugfs.after')
check('record: debugfs refuses control, cpu0, unwind (EPERM)',
      len(after) == 3 and all(r == 'EPERM' for r, _ in after.values()), str(after))
ro = rd(B, 'record.out', default='') or ''
check('record: spulse record -v uses /proc/spulse by itself and says so',
      ('spulse record: ' + IFACE_LINE) in ro, ro[-300:])
check('record: recording ran, manual trigger through /proc/spulse/control',
      log_has(B, 'ld: control running') and log_has(B, 'ld: trigger rc=0'), gl[-300:])
check('record: spulse record exits 0', log_has(B, 'ld: record rc=0'), ro[-300:])
dumps = sorted(n for n in os.listdir(os.path.join(OUT, B))
               if re.fullmatch(r'fl-\d{3}\.spulse', n)) if os.path.isdir(os.path.join(OUT, B)) else []
check('record: two flight dumps (manual trigger, SIGUSR1)', dumps == ['fl-001.spulse', 'fl-002.spulse'],
      str(dumps))
for n in dumps:
    j, why = check_json(os.path.join(OUT, B, n))
    j = j or {}
    check('record: %s valid, with samples, off-CPU intervals and a trigger' % n,
          j.get('samples', 0) > 0 and j.get('offcpu', 0) > 0 and j.get('triggers', 0) > 0,
          '%s' % (why if not j else {k: j.get(k) for k in ('samples', 'offcpu', 'triggers')}))
m = re.search(r'unwind tables (\d+)', ro)
uw = re.search(r'^tables (\d+)$', rd(B, 'unwind.txt', default='') or '', re.M)
check('record: unwind tables loaded through /proc/spulse/unwind',
      bool(m) and int(m.group(1)) > 0 and bool(uw) and int(uw.group(1)) > 0,
      'summary %s, /proc/spulse/unwind tables %s' % (m and m.group(1), uw and uw.group(1)))
check('record: rmmod under lockdown', log_has(B, 'ld: rmmod rc=0'))
dmesg_clean(B)

with open(RESULT, 'w') as f:
    f.write('%d %d\n' % tuple(V.counts))

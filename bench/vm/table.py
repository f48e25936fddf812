#!/usr/bin/env python3
"""Print the bench-vm table from the guest's key=value lines.
usage: table.py BENCH_TXT LAST_SPOOL_SAMPLES ROUNDS"""
import collections
import sys

vals = collections.defaultdict(list)
with open(sys.argv[1]) as f:
    for line in f:
        if '=' in line:
            k, v = line.strip().split('=', 1)
            try:
                vals[k].append(float(v))
            except ValueError:
                pass
spool_samples = int(sys.argv[2])
rounds = sys.argv[3]
base = min(vals['base_s'])
sp_t, pf_t = min(vals['spulse_s']), min(vals['perf_s'])
# bytes/sample from the last repetition (the files that were kept/measured)
sp_b, pf_b = vals['spulse_bytes'][-1], vals['perf_bytes'][-1]
sp_n = spool_samples or vals['spulse_samples_written'][-1]
pf_n = vals['perf_samples'][-1]
sp_bps, pf_bps = sp_b / max(sp_n, 1), pf_b / max(pf_n, 1)
sp_sd, pf_sd = sp_t / base, pf_t / base
print('bench-vm: gt -n %s (2 threads), best of %d, TCG 2 vCPUs, 999 Hz cpu-clock'
      % (rounds, len(vals['base_s'])))
print('%-12s %9s %9s %10s %9s %11s' % ('mode', 'wall_s', 'slowdown', 'bytes', 'samples',
                                       'bytes/smp'))
print('%-12s %9.3f %9.3f %10s %9s %11s' % ('unprofiled', base, 1.0, '-', '-', '-'))
print('%-12s %9.3f %9.3f %10d %9d %11.1f' % ('spulse', sp_t, sp_sd, sp_b, sp_n, sp_bps))
print('%-12s %9.3f %9.3f %10d %9d %11.1f' % ('perf -g', pf_t, pf_sd, pf_b, pf_n, pf_bps))
ov_sp, ov_pf = sp_sd - 1, pf_sd - 1
noise = (max(vals['base_s']) - base) / base
verdict = 'MET' if ov_sp <= ov_pf / 2 else 'NOT MET'
if ov_pf <= noise:
    verdict = 'INCONCLUSIVE (run-to-run noise %.1f%% >= perf overhead)' % (100 * noise)
print('spulse overhead %.1f%% vs perf %.1f%% (target: <= 1/2 of perf\'s): %s'
      % (100 * ov_sp, 100 * ov_pf, verdict))
print('bytes/sample ratio spulse/perf = 1/%.1f (target: <= 1/20): %s'
      % (pf_bps / sp_bps if sp_bps else float('inf'),
         'MET' if sp_bps * 20 <= pf_bps else 'NOT MET'))
med = lambda xs: sorted(xs)[len(xs) // 2]
mb, ms, mp = med(vals['base_s']), med(vals['spulse_s']), med(vals['perf_s'])
print('medians: unprofiled %.3f, spulse %.3f (%+.1f%%), perf %.3f (%+.1f%%)'
      % (mb, ms, 100 * (ms / mb - 1), mp, 100 * (mp / mb - 1)))
if vals.get('spulse_handler_ns'):
    print('spulse.ko handler time per run: %s s (%.1f us/sample)'
          % ([round(x / 1e9, 3) for x in vals['spulse_handler_ns']],
             sum(vals['spulse_handler_ns']) / 1e3
             / max(sum(vals['spulse_samples_taken']), 1)))
if vals.get('drain_cpu_s'):
    print('spulse-drain CPU time per run: %s s' % vals['drain_cpu_s'])
print('all runs: base %s spulse %s perf %s' % (vals['base_s'], vals['spulse_s'], vals['perf_s']))

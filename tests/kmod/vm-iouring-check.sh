#!/bin/sh
# Host side of vm-iouring.sh: for each OUTDIR/NAME.cpuN stream, count the
# samples of io-wq worker threads (comm iou-wrk-*) and of the other
# threads, and among the workers' samples those with any user frame and
# with a user frame at address 0.
# usage: vm-iouring-check.sh OUTDIR SPULSE_CLI NAME...
out=$1
cli=$2
shift 2
for name in "$@"; do
	for f in "$out/$name".cpu*; do
		"$cli" dump "$f"
	done | awk -v name="$name" '
		$1 == "#" && $2 == "header" { delete fk; delete fa; delete sp; delete sf; delete tc }
		$1 == "frame" { split($2, a, "="); id = a[2]; split($3, k, "=")
			fk[id] = k[2]; fa[id] = ""; if ($4 ~ /^addr=/) { split($4, x, "="); fa[id] = x[2] } }
		$1 == "stack" { split($2, a, "="); split($3, p, "="); split($4, fr, "=")
			sp[a[2]] = p[2]; sf[a[2]] = fr[2] }
		$1 == "thread" { split($2, a, "="); c = $5; sub(/^comm=/, "", c); tc[a[2]] = c }
		$1 == "sample" {
			for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
			wrk = tc[v["thread"]] ~ /^iou-wrk/
			nu = 0; z = 0
			for (s = v["stack"]; s != ""; s = (sp[s] == "root" ? "" : sp[s])) {
				f = sf[s]
				if (fk[f] == "user") { nu++; if (fa[f] == "0x0") z = 1 }
			}
			if (wrk) { w++; wu += nu > 0; wz += z } else o++
		}
		END { printf "%s: worker samples %d (with user frames %d, with a user frame at 0 %d), other samples %d\n", name, w, wu, wz, o }'
done

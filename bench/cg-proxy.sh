#!/bin/bash
# Instructions per proxied GET, start-up excluded (bench/cg-proxy.mjs; SCRIPT=cg-sidecar.mjs for the sidecar):
#   bench/cg-proxy.sh <label> [N]   (DIST=<an earlier build> for an A/B)
# Runs cg-proxy.mjs under callgrind with CG_SYNC, zeroes the counters before
# the measured GETs and dumps them after; prints the instructions per GET.
# CG_KEEP=<dir> (in the environment) keeps the callgrind files there, for callgrind_annotate.
# CG_IDLE=1 (cg-proxy.mjs only): a second window of the measured one's wall time without GETs is dumped too, and
# the main thread's count net of it is printed: the periodic work (APF, timers) the GETs' minutes hold, taken out.
set -e
label=$1; n=${2:-1000}; script=${SCRIPT:-cg-proxy.mjs}
sync=$(mktemp -d); out=${CG_KEEP:-$(mktemp -d)}; mkdir -p "$out"
cd "$(dirname "$0")"
CG_SYNC=$sync CG_IDLE=$CG_IDLE N=$n VG_DIR=${VG_DIR:-/tmp/cgp} valgrind --tool=callgrind --smc-check=all-non-file --collect-atstart=yes --separate-threads=yes \
  --callgrind-out-file="$out/cg.%p" node "$script" > "$out/log" 2>&1 &
steps='start end'; [ -n "$CG_IDLE" ] && steps='start end idle idle-end'
for step in $steps; do
  while [ ! -f "$sync/$step" ]; do sleep 1; if ! kill -0 $! 2>/dev/null; then cat "$out/log"; exit 1; fi; done
  # The file appears before its content is written: read until the pid is there.
  pid=$(cat "$sync/$step"); while [ -z "$pid" ]; do sleep 0.2; pid=$(cat "$sync/$step"); done
  # Without a pid callgrind_control would act on every callgrind run of the machine.
  case "$pid" in ''|*[!0-9]*) echo "no pid in $sync/$step" >&2; exit 1;; esac
  case $step in start|idle) callgrind_control -z "$pid" > /dev/null;; *) callgrind_control -d "$pid" > /dev/null;; esac
  touch "$sync/$step.ok"
done
wait $!
# The dump made at the end holds the counts since the zeroing: the measured GETs alone.
# One file per thread (--separate-threads): cg.<pid>.1-01 is the main thread, where the gateway (or hop) runs;
# with CLIENT=worker (cg-proxy.mjs) the test client is another thread, so the main thread's count is the hop's alone.
ir=0; for f in "$out"/cg.*.1-*; do ir=$((ir + $(grep -m1 '^summary:' "$f" | awk '{print $2}'))); done
main=$(grep -m1 '^summary:' "$(ls "$out"/cg.*.1-01 | head -1)" | awk '{print $2}')
echo "$label N=$n instructions $ir per GET $((ir / n)) main thread per GET $((main / n)) $(grep -o 'bad [0-9]*' "$out/log")"
if [ -n "$CG_IDLE" ]; then
  # The second dump (cg.<pid>.2-01) is the idle window's main thread.
  idle=$(grep -m1 '^summary:' "$(ls "$out"/cg.*.2-01 | head -1)" | awk '{print $2}')
  echo "$label idle window main thread $((idle / n)) per GET's share, main thread net per GET $(((main - idle) / n))"
fi

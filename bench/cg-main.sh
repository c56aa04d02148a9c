#!/bin/bash
# The main thread's instructions per operation of a bench script that zeroes
# and dumps callgrind's counters itself around N operations (cg-gets.mjs with
# WARM and CLIENT=process, cg-watch.mjs): the server's own count, without the
# JIT compiler's and GC's helper threads, whose share varies between runs.
#   bench/cg-main.sh <label> <script> [env assignments…]
#   e.g. bench/cg-main.sh base cg-gets.mjs CLIENT=process WARM=5000 N=2000 PROTO=h1 DIST=../.ab/base
# CG_KEEP=<dir> (in the environment) keeps the callgrind files there, for callgrind_annotate.
set -e
label=$1; script=$2; shift 2
out=${CG_KEEP:-$(mktemp -d)}
mkdir -p "$out"
cd "$(dirname "$0")"
env "$@" valgrind --tool=callgrind --smc-check=all-non-file --separate-threads=yes \
  --callgrind-out-file="$out/cg" node "$script" > "$out/log" 2>&1 || { cat "$out/log"; exit 1; }
n=$(env "$@" node -e 'console.log(process.env.N ?? 1000)')
ir=$(grep -m1 '^summary:' "$out/cg.1-01" | awk '{print $2}')
echo "$label $script $* | main-thread instructions $ir per op $((ir / n)) | $(tail -1 "$out/log")"
[ -n "$CG_KEEP" ] || rm -rf "$out"

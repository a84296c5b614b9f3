#!/bin/sh
# The per-stage cost table of Benchmarks/README.md ("Where a notification's CPU goes"), in one
# run: builds in release (run.sh), measures the crypto ceiling, then one saturation phase of
# the acceptance benchmark (file-queue route) with `perf record -g` on the gateway, its CPU
# time before and after, and the stage attribution (stage-attribution.sh).
#   Benchmarks/stage-costs.sh                  # 3 s phase, 64 connections
#   Benchmarks/stage-costs.sh --seconds 5 --connections 128 --work /tmp/stages
# Re-attribute a kept profile after changing the rules (same gateway binary):
#   Benchmarks/stage-attribution.sh /tmp/storerelay-bench/perf-stages.data 290.5 9000
set -eu
here=$(cd "$(dirname "$0")" && pwd)
command -v perf >/dev/null 2>&1 || { echo "perf is not installed (apt-get install -y linux-perf)" >&2; exit 1; }
# option() takes the first occurrence: the caller's options come first and win.
exec "$here/run.sh" "$@" --only stages --seconds 3 --connections 64

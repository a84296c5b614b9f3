#!/bin/sh
# StoreRelay benchmarks, on demand (never in CI): builds the gateway and the benchmark harness
# in release mode, then runs every benchmark and prints its figures with their baselines.
#   Benchmarks/run.sh                       # everything, 5 s per timed phase (~4 minutes)
#   Benchmarks/run.sh --seconds 3 --only accept,verify
#   Benchmarks/run.sh --perf                # also perf-profile the gateway at saturation
#   Benchmarks/run.sh --base b9fcf82 --only side-by-side [--side-rounds 3] --connections 64
#                                           # this tree against COMMIT, built in release from
#                                           # `git archive` into WORK/base-COMMIT, rounds
#                                           # alternating; prints the ratio (issue 31)
# Other options: --connections N (64), --fanout-rounds N (2), --work DIR (/tmp/storerelay-bench),
#   --scenarios "1 webhook,4 webhooks,file queue", --only dedupe [--dedupe-ids 1000000,10000000],
#   --only event-log [--event-log-events 1000000,10000000] (q lookup p99 and RSS with N events indexed),
#   --only backlog,backlog-paused [--backlog 100000,1000000] (a backlog for a dead or a paused destination),
#   --only cluster [--cluster-servers redis-server,valkey-server] [--cluster-key both|yes|no]
#   (cluster-mode acceptance as a ratio of single-node's),
#   --only play (Google Play pushes: journal vs enrichment inbox, ratio; not in the default set),
#   --only bus [--buses redis-stream,nats,amqp,sqs] (events delivered per second to each bus, started here,
#   beside one webhook; not in the default set). nginx is used as a baseline when installed
#   (apt-get install -y nginx); perf when installed (apt-get install -y linux-perf).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
# --base COMMIT: build that commit's gateway beside this one (its source from `git archive`,
# so no worktree or checkout is touched) and hand it to the harness as --base-binary.
base=""
work=/tmp/storerelay-bench
previous=""
for argument in "$@"; do
    case "$previous" in
        --base) base=$argument ;;
        --work) work=$argument ;;
    esac
    previous=$argument
done
(cd "$root" && swift build -c release --product storerelay)
# SwiftPM reuses its build description for the main package (a path dependency) while its
# manifest is unchanged, and then misses files added to or removed from it ("cannot find X in
# scope", "missing inputs"). Planning the build again costs a second.
rm -f "$here"/.build/*/release/description.json
(cd "$here" && swift build -c release --product storerelay-bench)
if [ -n "$base" ]; then
    commit=$(git -C "$root" rev-parse --short "$base")
    source="$work/base-$commit"
    if [ ! -x "$source/.build/release/storerelay" ]; then
        mkdir -p "$source"
        git -C "$root" archive "$commit" | tar -x -C "$source"
        (cd "$source" && swift build -c release --product storerelay)
    fi
    exec "$here/.build/release/storerelay-bench" --binary "$root/.build/release/storerelay" \
        --base-binary "$source/.build/release/storerelay" "$@"
fi
exec "$here/.build/release/storerelay-bench" --binary "$root/.build/release/storerelay" "$@"

#!/usr/bin/env bash
# Builds the libFuzzer targets and runs each for a bounded time.
#
#   Fuzz/run.sh [SECONDS-PER-TARGET] [TARGET...]      (default: 600 s, every target)
#
# Environment:
#   FUZZ_JOBS=N          targets run at the same time (default 2: one per core of a small box)
#   FUZZ_RSS_MB=N        libFuzzer -rss_limit_mb (default 2048)
#   FUZZ_TIMEOUT=N       seconds one input may take before it counts as a hang (default 10)
#   FUZZ_WORK=DIR        working corpora and logs (default ${TMPDIR:-/tmp}/storerelay-fuzz)
#   STORERELAY_VECTORS   the App Store vectors (default ../shared/vectors beside the repository)
#
# Seeds come from Fuzz/corpus/<target>/ (committed, read-only here) and, when the vectors are
# present, from a temporary copy of them made at run time (never written into the repository).
# New inputs go to $FUZZ_WORK/corpus/<target>/, kept between runs. Crashes, hangs and OOMs
# are written to Fuzz/artifacts/<target>/ (gitignored) with the log beside them.
set -euo pipefail

SECONDS_PER_TARGET=${1:-600}
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(FuzzHTTPParser FuzzHTTPResponse FuzzRESPReply FuzzNATSProtocol FuzzAMQPFrames FuzzSQSAnswer FuzzRedisTopology FuzzNotification FuzzPlayPush FuzzES256Verdict FuzzRoutesConf)

FUZZ_DIR=$(cd "$(dirname "$0")" && pwd)
REPO=$(dirname "$FUZZ_DIR")
JOBS=${FUZZ_JOBS:-2}
RSS_MB=${FUZZ_RSS_MB:-2048}
TIMEOUT=${FUZZ_TIMEOUT:-10}
WORK=${FUZZ_WORK:-${TMPDIR:-/tmp}/storerelay-fuzz}
VECTORS=${STORERELAY_VECTORS:-$REPO/../shared/vectors}
mkdir -p "$WORK"

# SwiftPM names a path package after its directory. When the repository itself lives in a
# directory called "fuzz" (a git worktree of the fuzz branch), it and Fuzz/ get the same
# identity and resolution fails; build from a copy under another name then.
PACKAGE_DIR=$FUZZ_DIR
if [ "$(basename "$REPO" | tr '[:upper:]' '[:lower:]')" = fuzz ]; then
    STAGE=$WORK/stage/StoreRelay
    mkdir -p "$STAGE/Fuzz"
    rm -rf "$STAGE/Sources" "$STAGE/Fuzz/Sources"
    cp -a "$REPO/Package.swift" "$REPO/Sources" "$STAGE/"
    cp -a "$FUZZ_DIR/Package.swift" "$FUZZ_DIR/Sources" "$STAGE/Fuzz/"
    PACKAGE_DIR=$STAGE/Fuzz
fi

# `--sanitize fuzzer` makes SwiftPM link with libFuzzer's main; the driver keeps only the last
# -sanitize= it is given, so instrumentation (fuzzer + address) is passed again as one flag.
echo "building in $PACKAGE_DIR"
swift build -c release --package-path "$PACKAGE_DIR" --sanitize fuzzer -Xswiftc -sanitize=fuzzer,address
BIN=$(swift build -c release --package-path "$PACKAGE_DIR" --sanitize fuzzer -Xswiftc -sanitize=fuzzer,address --show-bin-path)

# Real vectors as extra seeds, copied outside the repository. Notification bodies and compact
# JWS go in as they are; each JWS is also decoded into the NUL-separated form FuzzNotification
# reads as plain JSON parts (header, payload, nested transaction, renewal, app transaction).
VECTOR_SEEDS=$WORK/vector-seeds
rm -rf "$VECTOR_SEEDS"
if [ -d "$VECTORS" ]; then
    mkdir -p "$VECTOR_SEEDS/FuzzNotification"
    find "$VECTORS" -type f \( -name '*.jws' -o -name '*.json' -o -path '*/mock_signed_data/*' -o -path '*/xcode/*' \) \
        ! -name manifest.json -exec cp {} "$VECTOR_SEEDS/FuzzNotification/" \;
    if command -v python3 >/dev/null; then
        python3 - "$VECTOR_SEEDS/FuzzNotification" <<'EOF' || echo "note: structured vector seeds skipped"
import base64, json, pathlib, sys
out = pathlib.Path(sys.argv[1])
def part(segment):
    return base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))
for path in sorted(out.iterdir()):
    text = path.read_text(errors="ignore").strip()
    if text.startswith("{"):
        try: text = json.loads(text).get("signedPayload", "")
        except Exception: continue
    segments = text.split(".")
    if len(segments) != 3: continue
    try:
        header, payload = part(segments[0]), part(segments[1])
        decoded = json.loads(payload)
    except Exception: continue
    nested = []
    containers = [decoded.get("data") or {}, decoded.get("appData") or {}]
    for key in ("signedTransactionInfo", "signedRenewalInfo", "signedAppTransactionInfo"):
        value = next((c[key] for c in containers if isinstance(c, dict) and isinstance(c.get(key), str)), None)
        nested.append(part(value.split(".")[1]) if value and value.count(".") == 2 else b"")
    (out / ("structured-" + path.name)).write_bytes(b"\x00".join([header, payload] + nested))
EOF
    fi
    echo "vector seeds: $(find "$VECTOR_SEEDS" -type f | wc -l) files from $VECTORS"
else
    echo "note: $VECTORS is absent: running on the committed seeds only"
fi

max_len() {
    case $1 in
        FuzzNotification) echo 32768 ;;  # real notification bodies reach ~19 KB
        *) echo 8192 ;;
    esac
}

run_target() {
    local target=$1
    local corpus=$WORK/corpus/$target
    local artifacts=$FUZZ_DIR/artifacts/$target
    local log=$FUZZ_DIR/artifacts/$target.log
    mkdir -p "$corpus" "$artifacts"
    local seeds=("$FUZZ_DIR/corpus/$target")
    [ -d "$VECTOR_SEEDS/$target" ] && seeds+=("$VECTOR_SEEDS/$target")
    local dict=()
    [ -f "$FUZZ_DIR/dictionaries/$target.dict" ] && dict=("-dict=$FUZZ_DIR/dictionaries/$target.dict")
    echo "running $target for ${SECONDS_PER_TARGET}s (log: $log)"
    set +e
    ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} \
        "$BIN/$target" "$corpus" "${seeds[@]}" "${dict[@]}" \
        -max_total_time="$SECONDS_PER_TARGET" -timeout="$TIMEOUT" -rss_limit_mb="$RSS_MB" \
        -max_len="$(max_len "$target")" -artifact_prefix="$artifacts/" -print_final_stats=1 \
        >"$log" 2>&1
    local status=$?
    set -e
    local executions
    executions=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    local findings
    findings=$(find "$artifacts" -type f | wc -l)
    echo "$target: exit $status, ${executions:-?} executions, $findings artifact(s) in $artifacts"
}

# At most $JOBS targets at once.
running=0
for target in "${TARGETS[@]}"; do
    run_target "$target" &
    running=$((running + 1))
    if [ "$running" -ge "$JOBS" ]; then
        wait -n || true
        running=$((running - 1))
    fi
done
wait

#!/bin/sh
# Gives every sample of a `perf record --call-graph dwarf` profile of the gateway to one
# acceptance stage and prints the stage table (issue 31): each stage's share of the samples,
# and µs of CPU per notification when the CPU time per notification is given (share × it).
#   Benchmarks/stage-attribution.sh PERF.DATA [CPU_US_PER_NOTIFICATION [NOTIFICATIONS]]
# Run by `Benchmarks/stage-costs.sh` (storerelay-bench --only stages); runs on its own on a
# kept perf.data (the gateway binary must still be the one profiled).
#
# How a sample is attributed: its call chain is walked from the leaf (the running function)
# towards the thread's entry, and the first frame that a STAGE rule below names decides the
# stage. So malloc, memcpy, retain/release and the kernel's share of a system call go to the
# stage that called them. DWARF unwinding is needed: Debian's libcrypto and libc have no frame
# pointers and libcrypto is stripped, so with `-g` an OpenSSL sample is `[unknown]` without a
# caller (OpenSSL's symbol names are in the rules too, for a libcrypto with symbols). A
# sample no stage rule names goes to a FALLBACK rule (Dispatch and scheduling, the event
# loop, the Swift runtime...), and else to "unattributed" (their leaf frames are listed in
# PERF.unattributed.txt). DETAIL rules split a stage into sub-rows by a frame anywhere on the
# stack. The "nested" column is the share of a stage under NotificationVerifier.nested.
# STAGE_DEBUG=text prints, on stderr, the leaf-most four frames of every sample of the stages
# whose name contains text, counted: how to check a rule.
set -eu
data=$1
cost=${2:-0}
count=${3:-0}
frames=${data%.data}.unattributed.txt
demangle=cat
if command -v swift >/dev/null 2>&1; then demangle="swift demangle --simplified"; fi

perf script -i "$data" -F comm,tid,ip,sym,dso --no-inline 2>/dev/null | $demangle | awk -v debug="${STAGE_DEBUG:-}" -v cost="$cost" -v count="$count" -v frames="$frames" '
BEGIN {
    # STAGE rules: the first frame (leaf first) matching one of these decides. Order within
    # one frame: first rule wins. Symbols are demangled Swift (Module.Type.method) or C.
    n = 0
    # One ES256 check: the key and signature in OpenSSL (EVP_DigestVerify over a prehashed
    # digest: ECDSA_do_verify, the P-256 scalar multiplications, the BN/field arithmetic).
    rule[++n] = "isValidES256Signature|EVP_DigestVerify|EVP_PKEY_verify|ECDSA_|ecdsa_|ossl_ecdsa|nistz256|ec_GFp|EC_POINT|ossl_ec_|ec_scalar|ec_wNAF|bn_|BN_|ossl_bn|ECDSASignature|PublicKey\\.";  stage[n] = "ES256 signature checks (1 per notification; 3 with verify-nested yes)"
    rule[++n] = "sha256_block|SHA256_|SHA256\\.|ossl_sha256|sha256";                      stage[n] = "SHA-256 of the signing inputs"
    rule[++n] = "Base64\\.";                                                              stage[n] = "base64 (JWS segments)"
    rule[++n] = "ChainCache|VerifiedChainEntry";                                         stage[n] = "chain-cache lookups"
    rule[++n] = "JWSHeaderCache";                                                        stage[n] = "JWS header-cache lookups"
    rule[++n] = "JSONParser|JSONValue\\.parse|JSONValue\\.init\\(parsing|ByteWords";      stage[n] = "JSON parse of the body and the 3 payloads"
    rule[++n] = "NotificationBody\\.";                                                  stage[n] = "JSON parse of the body and the 3 payloads"
    rule[++n] = "JSONSerialization|JSONStringEscaping|jsonBytes|JSONValue\\.write|JSONValue\\.serializ|EventDocument|NormalizedEvent\\.json|StoredNotification\\.json|storedBytes|encoded"; stage[n] = "serialization of the event and stored record"
    rule[++n] = "NormalizedEvent|NotificationContent|AppleDates|Timestamp\\.iso|V1Notification"; stage[n] = "normalization of the event"
    rule[++n] = "EventLog|EventIndexFile|EventKeyTable|EventSummary|SegmentReader";        stage[n] = "event log (search index) append"
    rule[++n] = "FileQueue|QueueSegmentWriter|GzipDeflater|SegmentCompressor";            stage[n] = "fan-out: file-queue append"
    rule[++n] = "DeliveryEngine|AttemptRunner|DestinationQueue|BookKeeper|DeliveryJob|DeliveryService|EventLedger|DueHeap|WaitingRoom|DeliveryCheckpoint|EventDeliveryState|DeliveryAttempt|DeliveryObserver|StoreRelayDelivery"; stage[n] = "fan-out: delivery engine (jobs, attempts, progress)"
    rule[++n] = "Journal|RecordFrame|SegmentWriter|EventIDDigest|DigestBloomFilter|RetiredID|MappedSegment|NotificationStore|JournalRecord"; stage[n] = "journal append + group commit (fsync)"
    rule[++n] = "HTTPResponse|AnswerQueue|appendOutput|handleWritable|HTTPConnection\\.flush|HTTPConnection\\.deliver|OutputBuffer|resumeWriting|IntakeOutcome|HTTPResponder"; stage[n] = "the answer (200 + JSON, write)"
    rule[++n] = "HTTPRequestParser|HTTPMessageDecoder|HTTPHeaders|HTTPFields|HTTPRequest|ChunkedCoding|HTTPSyntax|handleReadable|processRequests|ConnectionStateMachine|HTTPRouter|ConnectionLimits|ConnectionStanding|HTTPServer|HTTPConnection|ListeningSocket|AcceptShim|SocketChannel|SocketTransport"; stage[n] = "read and parse the request (HTTP, connections)"
    rule[++n] = "SignedDataVerifier|NotificationVerifier|DecodedJWS|NotificationSubject|VerifiedSignedData|VerifiedNotification|CertificateChainVerifier|Certificate\\."; stage[n] = "verification glue (JWS split, x5c/alg checks, nested matching)"
    rule[++n] = "NotificationProcessor|AcceptancePolicy|RouteTable|RouteRule|WebhookRequest\\.unsendable"; stage[n] = "policy and routing"
    rule[++n] = "NotificationIntake|IntakeSpans|IntakeTally|GatewayMetrics|Gateway\\.|GatewayObserver|CountBatcher|IntakeSilence|MetricsRegistry|Histogram|Counter\\.|Gauge|Logger|Tracing|Span"; stage[n] = "intake glue (inlined into NotificationIntake.receive; metrics)"
    stages = n
    # DETAIL rules: within a stage, the first whose pattern a frame of the chain matches
    # names a sub-row (the rest of the stage is "rest"). Kernel symbols name the system call.
    d = 0
    sig = stage[1]; ser = "serialization of the event and stored record"; jrn = "journal append + group commit (fsync)"
    evl = "event log (search index) append"; fq = "fan-out: file-queue append"; dlv = "fan-out: delivery engine (jobs, attempts, progress)"
    req = "read and parse the request (HTTP, connections)"; ans = "the answer (200 + JSON, write)"; par = "JSON parse of the body and the 3 payloads"
    hand = "thread hand-offs (Dispatch queues, futex, scheduling)"
    ds[++d] = sig; dp[d] = "NotificationVerifier\\.nested";       dl[d] = "nested JWS: signedTransactionInfo + signedRenewalInfo (checked with verify-nested yes)"
    ds[++d] = sig; dp[d] = ".";                                      dl[d] = "outer signedPayload (1 check)"
    ds[++d] = par; dp[d] = "NotificationBody\\.";                  dl[d] = "the request body {\"signedPayload\": ...}"
    ds[++d] = par; dp[d] = "NotificationVerifier\\.nested";       dl[d] = "the 2 nested payloads"
    ds[++d] = par; dp[d] = ".";                                      dl[d] = "the outer payload (and headers not cached)"
    ds[++d] = ser; dp[d] = "NotificationBody\\.forwardable";       dl[d] = "canonical body {\"signedPayload\":\"<JWS>\"} rebuilt (JWS escaped)"
    ds[++d] = ser; dp[d] = "StoredNotification\\.encoded";         dl[d] = "journal record: header + body escaped again as a JSON string"
    ds[++d] = ser; dp[d] = "NormalizedEvent";                         dl[d] = "event JSON (once; shared by journal and file queue)"
    ds[++d] = ser; dp[d] = "DeliveryProgress|DeliveryCheckpoint";     dl[d] = "delivery progress records"
    ds[++d] = ser; dp[d] = "HTTPResponse|IntakeOutcome";              dl[d] = "the answer: JSON body and head"
    ds[++d] = ser; dp[d] = "NotificationStore\\.store|JournalStore";  dl[d] = "journal record: header + body escaped again as a JSON string"
    ds[++d] = ser; dp[d] = "forwardable|NotificationProcessor|NotificationIntake\\.receive"; dl[d] = "canonical body {\"signedPayload\":\"<JWS>\"} rebuilt (JWS escaped)"
    for (k = 0; k < 5; k++) {
        st = (k == 0) ? jrn : (k == 1) ? evl : (k == 2) ? fq : (k == 3) ? dlv : hand
        ds[++d] = st; dp[d] = "fdatasync|fsync|sync_file";            dl[d] = "fdatasync (kernel)"
        ds[++d] = st; dp[d] = "sys_pwrite|sys_write|ksys_write";     dl[d] = "pwrite/write (kernel)"
        ds[++d] = st; dp[d] = "sys_pread|sys_read";                   dl[d] = "pread/read (kernel)"
        ds[++d] = st; dp[d] = "sys_futex";                            dl[d] = "futex: wake-ups between threads (kernel)"
        ds[++d] = st; dp[d] = "kernel";                               dl[d] = "other kernel"
    }
    ds[++d] = jrn; dp[d] = "crc32";                                   dl[d] = "CRC-32 of the record (zlib crc32_z)"
    ds[++d] = jrn; dp[d] = "memmove|memcpy|Array\\.append";          dl[d] = "copying records into the batch"
    ds[++d] = evl; dp[d] = "EventLogRecord\\.encode";              dl[d] = "summary record encoding"
    ds[++d] = evl; dp[d] = "EventLog\\.update|EventLog\\.readRecord|locateOpen|decodeBody"; dl[d] = "delivery-state update: read back + rewrite"
    ds[++d] = req; dp[d] = "sys_recvfrom|sys_read|tcp_recvmsg";      dl[d] = "recv (kernel)"
    ds[++d] = req; dp[d] = "sys_epoll|epoll_ctl";                     dl[d] = "epoll interest changes (kernel)"
    ds[++d] = req; dp[d] = "sys_sendto|tcp_sendmsg";                  dl[d] = "answers sent from the read path (kernel; loopback peer incl.)"
    ds[++d] = req; dp[d] = "kernel";                                  dl[d] = "other kernel"
    ds[++d] = req; dp[d] = "HTTPRequestParser";                       dl[d] = "HTTP head parse and framing"
    ds[++d] = ans; dp[d] = "sys_sendto|sys_write|sendmsg";            dl[d] = "send (kernel)"
    ds[++d] = dlv; dp[d] = "AttemptRunner";                           dl[d] = "attempt runner (send, settle)"
    ds[++d] = dlv; dp[d] = "recordAttempt|recordDelivery";            dl[d] = "recording the attempt and the delivery"
    ds[++d] = dlv; dp[d] = "DeliveryEngine\\.submit";              dl[d] = "submit (planning the fan-out)"
    details = d
    # FALLBACK rules, tried on the whole chain only when no stage rule matched.
    m = 0
    fb[++m] = "futex|schedule|finish_task_switch|__x64_sys_sched|try_to_wake_up|pthread_cond|__lll_lock|_dispatch_sema|_dispatch_worker_thread|_dispatch_root_queue|_dispatch_|dispatch_"; fbs[m] = "thread hand-offs (Dispatch queues, futex, scheduling)"
    fb[++m] = "epoll|EventLoop|do_epoll";                                                fbs[m] = "event loop (epoll) and timers"
    fb[++m] = "swift_|libswiftCore|Swift\\.";                                            fbs[m] = "Swift runtime (retain/release, allocation) not under a stage"
    fb[++m] = "malloc|free|memcpy|memmove|memset|libc\\.so";                              fbs[m] = "libc (allocation, copies) not under a stage"
    fb[++m] = "libcrypto";                                                               fbs[m] = "OpenSSL frames whose callers were lost"
    fb[++m] = "kernel";                                                                    fbs[m] = "kernel, no user frame"
    fbcount = m
    total = 0
}
function classify(   i, j, k, s, kernelLeaf) {
    if (nf == 0) return
    total++
    kernelLeaf = (frame[1] ~ /kernel/) ? 1 : 0
    s = ""
    for (i = 1; i <= nf && s == ""; i++)
        for (j = 1; j <= stages; j++)
            if (frame[i] ~ rule[j]) { s = stage[j]; break }
    if (s == "") {
        for (j = 1; j <= fbcount && s == ""; j++)
            for (i = 1; i <= nf; i++)
                if (frame[i] ~ fb[j]) { s = fbs[j]; break }
        if (s == "") { s = "unattributed" }
        unattributed[frame[1]]++
    }
    samples[s]++
    if (debug != "" && index(s, debug)) { for (i = 1; i <= nf && i <= 4; i++) chain_ = (i == 1 ? "" : chain_ " <- ") frame[i]; dbg[chain_]++ }
    for (k = 1; k <= details; k++) {
        if (ds[k] != s) continue
        for (i = 1; i <= nf; i++) if (frame[i] ~ dp[k]) break
        if (i <= nf) { sub_[s SUBSEP dl[k]]++; break }
    }
    # Under the check of a nested JWS (signedTransactionInfo, signedRenewalInfo)?
    for (i = 1; i <= nf; i++) if (frame[i] ~ /NotificationVerifier\.nested/) { nested[s]++; nestedTotal++; break }
    if (kernelLeaf) { kernel[s]++; kernelTotal++ }
    nf = 0
}
/^[^ \t]/ { classify(); nf = 0; next }
/^[ \t]+[0-9a-f]+ / {
    line = $0
    sub(/^[ \t]+[0-9a-f]+ /, "", line)
    frame[++nf] = line
    next
}
/^$/ { classify() }
END {
    classify()
    if (total == 0) { print "no samples"; exit 1 }
    printf "%-66s %7s %9s %8s %8s\n", "stage", "share", "µs/notif", "kernel", "nested"
    for (k = 1; k <= stages + fbcount + 1; k++) {
        name = (k <= stages) ? stage[k] : (k <= stages + fbcount ? fbs[k - stages] : "unattributed")
        if (printed[name] || !(name in samples)) continue
        printed[name] = 1
        share = samples[name] / total
        printf "%-66s %6.1f%% %9.1f %7.0f%% %7.0f%%\n", name, share * 100, share * cost, kernel[name] / samples[name] * 100, nested[name] / samples[name] * 100
        for (q = 1; q <= details; q++) {
            key = name SUBSEP dl[q]
            if (ds[q] != name || (key in shown) || !(key in sub_)) continue
            shown[key] = 1
            share = sub_[key] / total
            printf "    %-62s %6.1f%% %9.1f\n", dl[q], share * 100, share * cost
        }
    }
    printf "%-66s %6.1f%% %9.1f %7.0f%% %7.0f%%\n", "total (" total " samples" (count > 0 ? ", " count " notifications" : "") ")", 100, cost, kernelTotal / total * 100, nestedTotal / total * 100
    for (f in unattributed) print unattributed[f], f > frames
    for (f in dbg) print dbg[f], f > "/dev/stderr"
}
'
if [ -f "$frames" ]; then sort -rn "$frames" -o "$frames"; fi

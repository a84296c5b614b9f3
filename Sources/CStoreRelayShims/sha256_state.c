// SHA-256 with caller-owned, copyable state (see the header for why).
#define OPENSSL_SUPPRESS_DEPRECATED
#include "CStoreRelayShims.h"
#include <openssl/sha.h>
#include <stdalign.h>

_Static_assert(sizeof(SHA256_CTX) <= sizeof(storerelay_sha256_state), "storerelay_sha256_state is too small for SHA256_CTX");
_Static_assert(alignof(SHA256_CTX) <= alignof(storerelay_sha256_state), "storerelay_sha256_state is under-aligned for SHA256_CTX");

void storerelay_sha256_begin(storerelay_sha256_state *state) {
    SHA256_Init((SHA256_CTX *)state);
}

void storerelay_sha256_update(storerelay_sha256_state *state, const void *bytes, size_t count) {
    if (count > 0) SHA256_Update((SHA256_CTX *)state, bytes, count);
}

void storerelay_sha256_finish(storerelay_sha256_state *state, uint8_t digest[32]) {
    SHA256_Final(digest, (SHA256_CTX *)state);
}

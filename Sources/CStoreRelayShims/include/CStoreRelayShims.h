#ifndef STORERELAY_SHIMS_H
#define STORERELAY_SHIMS_H
/// C shims for what Swift cannot call directly: `_GNU_SOURCE`-only functions, function-like
/// macros and variadic functions, plus one piece of curve arithmetic written against OpenSSL's
/// low-level EC API (p256_key_table.c). Every function is prefixed `storerelay_` and says why
/// it exists.
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/// `accept4` is declared only under `_GNU_SOURCE`; it lets us accept straight into
/// non-blocking, close-on-exec sockets in one call.
int storerelay_accept4_nonblocking(int fd, struct sockaddr *addr, socklen_t *len);

/// `OPENSSL_free` is a function-like macro (it passes __FILE__/__LINE__ to `CRYPTO_free`), so
/// Swift cannot call it; buffers OpenSSL allocates for us (`BN_bn2hex`, `i2d_*` with a NULL
/// output) must still be released through OpenSSL's allocator.
void storerelay_openssl_free(void *ptr);
/// Opaque OpenSSL types, declared here so this header need not include OpenSSL's.
typedef struct ssl_st SSL;
typedef struct ssl_ctx_st SSL_CTX;
typedef struct bio_st BIO;

/// `SSL_CTX_set_min_proto_version` is a function-like macro over `SSL_CTX_ctrl`, which Swift
/// cannot import. Returns 1 on success.
int storerelay_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version);

/// `SSL_set_min_proto_version` / `SSL_set_max_proto_version` are macros too; tests use them to
/// offer an old protocol on purpose. Returns 1 on success.
int storerelay_SSL_set_proto_versions(SSL *ssl, int min_version, int max_version);

/// `SSL_set_tlsext_host_name` (SNI) is a function-like macro over `SSL_ctrl`. Returns 1 on success.
int storerelay_SSL_set_tlsext_host_name(SSL *ssl, const char *name);

/// The `SSL_OP_*` constants are built with a 64-bit shift macro that Swift does not import:
/// disables compression (CRIME) and renegotiation, and prefers the server's cipher order.
void storerelay_SSL_CTX_set_hardening_options(SSL_CTX *ctx);

/// `BIO_set_mem_eof_return` is a macro: after the transport's end of stream, make the memory
/// BIO report EOF (0) instead of "retry", so OpenSSL sees a truncated stream as such.
void storerelay_BIO_set_mem_eof(BIO *bio);

/// `mallopt` and `M_ARENA_MAX` come from <malloc.h>, which Swift's Glibc module does not
/// export. Caps glibc's malloc arenas (see ProcessSetup); returns 1 on success.
int storerelay_set_malloc_arena_max(int arenas);

/// `malloc_trim` (also <malloc.h>): gives the free pages of every arena back to the system.
/// Returns 1 when memory was released.
int storerelay_malloc_trim(void);

/// ECDSA P-256 verification against one fixed public key Q, with a precomputed table of
/// multiples of Q (p256_key_table.c says why and how). Opaque to Swift.
typedef struct storerelay_p256_key_table storerelay_p256_key_table;
typedef struct evp_pkey_st EVP_PKEY;
typedef struct bignum_ctx BN_CTX;

/// Builds the table for `key`, which must be a P-256 public key: ~25 ms and ~150 KB. NULL
/// when OpenSSL cannot build one (the caller then keeps the general path). For the key G
/// itself OpenSSL uses its built-in table: still correct, just no faster.
storerelay_p256_key_table *storerelay_p256_key_table_new(const EVP_PKEY *key);
void storerelay_p256_key_table_free(storerelay_p256_key_table *table);

/// Verifies the raw JWS signature `R‖S` (64 bytes) over a SHA-256 `digest` (32 bytes): 1 valid,
/// 0 invalid, -1 when OpenSSL failed (out of memory). Leaves OpenSSL's error queue as it found it.
/// `scratch` is the caller's, used by one thread at a time; the table may be shared by many.
/// The inverse modulo the order n of P-256 of `value` (32 bytes, big-endian) into `inverse`:
/// 1, or 0 when `value` is 0 or not below n. Part of the verification; declared for its tests.
int storerelay_p256_order_inverse(uint8_t inverse[32], const uint8_t value[32]);

int storerelay_p256_key_table_verify(const storerelay_p256_key_table *table, const uint8_t *digest,
                                     const uint8_t *signature, BN_CTX *scratch);

/// SHA-256 through OpenSSL's low-level functions, on state the caller owns: a plain value, so
/// a prefix hashed once (a JWS header) can be copied and continued, and a digest costs no
/// provider lookup (EVP_Digest's one-shot fetch is a microsecond per call). Those functions
/// are deprecated in OpenSSL 3 but remain; the state is sized and aligned for `SHA256_CTX`.
typedef struct { uint64_t words[16]; } storerelay_sha256_state;
void storerelay_sha256_begin(storerelay_sha256_state *state);
void storerelay_sha256_update(storerelay_sha256_state *state, const void *bytes, size_t count);
/// Writes the digest of what `state` absorbed; `state` is spent (hash a copy to continue).
void storerelay_sha256_finish(storerelay_sha256_state *state, uint8_t digest[32]);

#endif

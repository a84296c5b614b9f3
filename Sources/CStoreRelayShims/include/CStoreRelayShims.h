#ifndef STORERELAY_SHIMS_H
#define STORERELAY_SHIMS_H
/// C shims for what Swift cannot call directly: `_GNU_SOURCE`-only functions, function-like
/// macros and variadic functions. Every function is prefixed `storerelay_` and says why it
/// exists; none does any work of its own.
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <spawn.h>

/// `accept4` is declared only under `_GNU_SOURCE`; it lets us accept straight into
/// non-blocking, close-on-exec sockets in one call.
int storerelay_accept4_nonblocking(int fd, struct sockaddr *addr, socklen_t *len);

/// `posix_spawn_file_actions_addclosefrom_np` and `..._addchdir_np` are declared only under
/// `_GNU_SOURCE`. The test support spawns children with them instead of Foundation's
/// `Process`, whose descriptor-closing code faults now and then (see its `ChildProcess`).
int storerelay_spawn_addclosefrom(posix_spawn_file_actions_t *actions, int from);
int storerelay_spawn_addchdir(posix_spawn_file_actions_t *actions, const char *path);

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

#endif

#ifndef STORERELAY_SHIMS_H
#define STORERELAY_SHIMS_H
/// C shims for what Swift cannot call directly: `_GNU_SOURCE`-only functions, function-like
/// macros and variadic functions. Every function is prefixed `storerelay_` and says why it exists.
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

#endif

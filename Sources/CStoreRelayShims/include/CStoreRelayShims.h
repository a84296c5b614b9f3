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

#endif

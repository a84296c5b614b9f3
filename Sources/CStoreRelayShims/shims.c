#define _GNU_SOURCE
/* As in COpenSSL/shim.h: deprecated OpenSSL APIs do not compile here either. */
#define OPENSSL_NO_DEPRECATED
#include "CStoreRelayShims.h"
#include <sys/socket.h>
#include <fcntl.h>
#include <spawn.h>
#include <openssl/crypto.h>
#include <openssl/ssl.h>
#include <openssl/bio.h>

int storerelay_accept4_nonblocking(int fd, struct sockaddr *addr, socklen_t *len) {
#ifdef __linux__
    return accept4(fd, addr, len, SOCK_NONBLOCK | SOCK_CLOEXEC);
#else
    int client = accept(fd, addr, len);
    if (client >= 0) {
        fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK);
        fcntl(client, F_SETFD, FD_CLOEXEC);
    }
    return client;
#endif
}

void storerelay_openssl_free(void *ptr) {
    OPENSSL_free(ptr);
}

int storerelay_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_min_proto_version(ctx, version);
}

int storerelay_SSL_set_proto_versions(SSL *ssl, int min_version, int max_version) {
    return SSL_set_min_proto_version(ssl, min_version) == 1
        && SSL_set_max_proto_version(ssl, max_version) == 1;
}

int storerelay_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

void storerelay_SSL_CTX_set_hardening_options(SSL_CTX *ctx) {
    SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
}

void storerelay_BIO_set_mem_eof(BIO *bio) {
    BIO_set_mem_eof_return(bio, 0);
}

#if defined(__GLIBC__)
#include <malloc.h>
int storerelay_set_malloc_arena_max(int arenas) { return mallopt(M_ARENA_MAX, arenas); }
int storerelay_malloc_trim(void) { return malloc_trim(0); }
#else
int storerelay_set_malloc_arena_max(int arenas) { (void)arenas; return 1; }
int storerelay_malloc_trim(void) { return 0; }
#endif

int storerelay_spawn_addclosefrom(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

int storerelay_spawn_addchdir(posix_spawn_file_actions_t *actions, const char *path) {
    return posix_spawn_file_actions_addchdir_np(actions, path);
}

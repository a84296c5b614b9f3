#define _GNU_SOURCE
#include "CStoreRelayShims.h"
#include <sys/socket.h>
#include <fcntl.h>
#include <openssl/crypto.h>

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

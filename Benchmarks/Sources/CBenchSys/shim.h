#ifndef STORERELAY_BENCH_SYS_H
#define STORERELAY_BENCH_SYS_H
/* Linux interfaces the Glibc module does not import: epoll drives the harness, timerfd paces
 * the fixed-rate load, inotify watches file-queue segments grow, malloc_trim returns freed
 * memory as the gateway does before a memory figure is read. Headers only, nothing to link. */
#include <malloc.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <sys/inotify.h>
#endif

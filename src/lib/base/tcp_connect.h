/* One way to open a TCP connection for the clients of libspoor: the GDB remote client
 * (gdb_remote.c), the OpenOCD client (openocd.c) and the trace stream source
 * (trace_source_tcp.c). Internal. */
#ifndef SPOOR_TCP_CONNECT_H
#define SPOOR_TCP_CONNECT_H

#include <stdbool.h>

#define SPOOR_TCP_CONNECT_MS 5000

/* A socket connected to host:port (every address the name resolves to, in turn), with
 * TCP_NODELAY, close-on-exec, non-blocking when asked. Each connect waits at most timeout_ms
 * (0: SPOOR_TCP_CONNECT_MS, the bound of every client: a peer that drops SYNs is given up on
 * in seconds, not the kernel's two minutes). -1 when none connects: *gai_error is getaddrinfo()'s
 * code when the name does not resolve (gai_strerror() says why), else 0 and errno says why
 * (ETIMEDOUT when the wait ran out). */
int spoor_tcp_connect(const char *host, const char *port, unsigned timeout_ms, bool nonblocking,
                      int *gai_error);

#endif

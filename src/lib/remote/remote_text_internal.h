/* What a peer (a GDB server, OpenOCD) sent, made fit for a one-line message: the remote layer's
 * clients paste it into their errors. */
#ifndef SPOOR_REMOTE_TEXT_INTERNAL_H
#define SPOOR_REMOTE_TEXT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

/* Up to max bytes of b[0..n) into out (NUL-terminated, at most cap bytes): printable ASCII as
 * it is, '\' (and '"' when quoted: the text goes between quotes) and every other byte
 * (newlines, control bytes, raw bytes) as \xHH: never a newline. */
void spoor_peer_excerpt(const void *b, size_t n, size_t max, bool quoted, char *out, size_t cap);

#endif

/* spoor itm's pieces inside the CLI: the -c P,FMT software channels, each format compiled
 * (and bounded) when the option is read (itm_channel.c), and one packet as a listing line or
 * a JSON object (itm_print.c). */
#ifndef SPOOR_ITM_CLI_H
#define SPOOR_ITM_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "json_out.h"
#include "spoor/elf.h"
#include "spoor/itm_decoder.h"

#define ITM_MAX_PORTS 256

/* A -c format, compiled: the text around the one conversion (escapes and %% resolved) and the
 * conversion as a printf spec whose width and precision are bounded. */
typedef struct itm_channel {
    bool on;
    bool raw;          /* the format is exactly %c: the bytes as they are */
    char conv;         /* c d u x X (%i is %d), or 0: the format is text only */
    char spec[16];     /* "%" flags width .precision conv, for d u x X */
    char *before;      /* the text before the conversion (all of it when there is none) */
    const char *after; /* the text after it: points into the before allocation */
} itm_channel;

typedef struct itm_channels {
    itm_channel ch[ITM_MAX_PORTS];
    bool any; /* a -c was given */
} itm_channels;

/* -c ARG (PORT,FORMAT) into cs; 0, or the exit status of the one-line error. */
int itm_channel_add(itm_channels *cs, const char *arg);

/* true when every format given is exactly %c; ports[] then has bit port % 32 of word port / 32
 * set for each (spoor_itm_select_text). */
bool itm_channels_raw(const itm_channels *cs, uint32_t ports[ITM_MAX_PORTS / 32]);

/* One write of size bytes (1, 2 or 4) to the channel's port, formatted. */
void itm_channel_print(FILE *out, const itm_channel *ch, uint32_t value, unsigned size);

void itm_channels_free(itm_channels *cs);

/* One packet: a listing line (OFFSET TIME TYPE FIELDS; PC values named from elf when not NULL)
 * or a JSON object (fields: docs/itm.md); stream >= 0 is the TPIU trace source ID it came
 * from ("[1] " before the line, "stream":1), < 0 for a plain ITM stream. */
void itm_print_text(FILE *o, spoor_elf *elf, int stream, const spoor_itm_packet *p);
void itm_print_json(json_out *j, int stream, const spoor_itm_packet *p);

#endif

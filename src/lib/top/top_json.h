/* The JSON of spoor top's interval reports (spoor/top_session.h spoor_top_session_report_json;
 * docs/top.md, "JSON"): the threads as the catalogue knows them. */
#ifndef SPOOR_TOP_JSON_H
#define SPOOR_TOP_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "top/top_catalogue.h"

/* The text of spoor_top_session_report_json: times in ms of cpu_hz, each thread's "stack" with
 * stack. */
char *spoor_top_json_report(spoor_top_catalogue *threads, const spoor_top_report *r, unsigned flags,
                            uint64_t cpu_hz, bool stack, size_t *len);

#endif

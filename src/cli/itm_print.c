/* spoor itm's output of one packet (itm_cli.h): a listing line or a JSON object. */
#include <inttypes.h>
#include <stdio.h>

#include "itm_cli.h"
#include "spoor/elf.h"

static const char *action_name(spoor_itm_exception_action a)
{
    return a == SPOOR_ITM_EXC_ENTER ? "enter" : a == SPOOR_ITM_EXC_EXIT ? "exit" : "return";
}

static void print_symbol(FILE *o, spoor_elf *elf, uint32_t pc)
{
    if (!elf)
        return;
    spoor_location loc;
    if (spoor_elf_symbolize(elf, pc, &loc, 1) == 0 || !loc.function)
        return;
    fprintf(o, " %s+0x%x", loc.function, loc.offset);
    if (loc.file)
        fprintf(o, " at %s:%u", loc.file, loc.line);
}

void itm_print_json(json_out *j, int stream, const spoor_itm_packet *p)
{
    json_object_begin(j, NULL);
    json_key_string(j, JSON_KEY("type"), spoor_itm_type_name(p->type));
    json_key_uint(j, JSON_KEY("offset"), p->offset);
    json_key_uint(j, JSON_KEY("time"), p->time);
    if (stream >= 0)
        json_key_uint(j, JSON_KEY("stream"), (unsigned)stream);
    switch (p->type) {
    case SPOOR_ITM_SYNC:
    case SPOOR_ITM_OVERFLOW:
    case SPOOR_ITM_TYPE_COUNT: break;
    case SPOOR_ITM_TS_LOCAL:
        json_key_uint(j, JSON_KEY("delta"), p->u.ts_local.delta);
        json_key_uint(j, JSON_KEY("tc"), p->u.ts_local.tc);
        break;
    case SPOOR_ITM_TS_GLOBAL1:
        json_key_uint(j, JSON_KEY("value"), p->u.ts_global1.value);
        json_key_bool(j, JSON_KEY("wrap"), p->u.ts_global1.wrap);
        json_key_bool(j, JSON_KEY("clkch"), p->u.ts_global1.clkch);
        break;
    case SPOOR_ITM_TS_GLOBAL2: json_key_uint(j, JSON_KEY("value"), p->u.ts_global2.value); break;
    case SPOOR_ITM_EXTENSION:
        json_key_uint(j, JSON_KEY("page"), p->u.ext.page);
        if (p->u.ext.hw)
            json_key_bool(j, JSON_KEY("hw"), true);
        break;
    case SPOOR_ITM_SW:
        json_key_uint(j, JSON_KEY("port"), p->u.sw.port);
        if (p->u.sw.page_unknown)
            json_key_bool(j, JSON_KEY("page_unknown"), true);
        json_key_uint(j, JSON_KEY("size"), p->u.sw.size);
        json_key_uint(j, JSON_KEY("value"), p->u.sw.value);
        break;
    case SPOOR_ITM_EVENT_COUNTER: {
        uint8_t b = p->u.event_counter.bits;
        json_key_uint(j, JSON_KEY("cpi"), b & 1);
        json_key_uint(j, JSON_KEY("exc"), b >> 1 & 1);
        json_key_uint(j, JSON_KEY("sleep"), b >> 2 & 1);
        json_key_uint(j, JSON_KEY("lsu"), b >> 3 & 1);
        json_key_uint(j, JSON_KEY("fold"), b >> 4 & 1);
        json_key_uint(j, JSON_KEY("cyc"), b >> 5 & 1);
        break;
    }
    case SPOOR_ITM_EXCEPTION:
        json_key_uint(j, JSON_KEY("number"), p->u.exception.number);
        json_key_string(j, JSON_KEY("action"), action_name(p->u.exception.action));
        break;
    case SPOOR_ITM_PC_SAMPLE:
        if (p->u.pc_sample.sleep)
            json_key_null(j, JSON_KEY("pc"));
        else
            json_key_uint(j, JSON_KEY("pc"), p->u.pc_sample.pc);
        break;
    case SPOOR_ITM_DWT_PC:
        json_key_uint(j, JSON_KEY("comparator"), p->u.dwt_pc.comparator);
        json_key_uint(j, JSON_KEY("pc"), p->u.dwt_pc.pc);
        break;
    case SPOOR_ITM_DWT_MATCH:
        json_key_uint(j, JSON_KEY("comparator"), p->u.dwt_match.comparator);
        break;
    case SPOOR_ITM_DWT_ADDR:
        json_key_uint(j, JSON_KEY("comparator"), p->u.dwt_addr.comparator);
        json_key_uint(j, JSON_KEY("addr_offset"), p->u.dwt_addr.offset);
        break;
    case SPOOR_ITM_DWT_DATA:
        json_key_uint(j, JSON_KEY("comparator"), p->u.dwt_data.comparator);
        json_key_bool(j, JSON_KEY("write"), p->u.dwt_data.write);
        json_key_uint(j, JSON_KEY("size"), p->u.dwt_data.size);
        json_key_uint(j, JSON_KEY("value"), p->u.dwt_data.value);
        break;
    case SPOOR_ITM_ERROR: {
        char why[160];
        snprintf(why, sizeof why, "%s (detected at %" PRIu64 ")",
                 spoor_itm_error_text(p->u.error.why), p->u.error.detected_at);
        json_key_uint(j, JSON_KEY("bytes_lost"), p->u.error.bytes_lost);
        json_key_string(j, JSON_KEY("why"), why);
        break;
    }
    }
    json_object_end(j);
    json_finish(j);
}

void itm_print_text(FILE *o, spoor_elf *elf, int stream, const spoor_itm_packet *p)
{
    if (stream >= 0)
        fprintf(o, "[%d] ", stream);
    fprintf(o, "%8" PRIu64 " %c%-11" PRIu64 " %-13s", p->offset, p->time_exact ? ' ' : '~', p->time,
            spoor_itm_type_name(p->type));
    switch (p->type) {
    case SPOOR_ITM_SYNC:
    case SPOOR_ITM_OVERFLOW:
    case SPOOR_ITM_TYPE_COUNT: break;
    case SPOOR_ITM_TS_LOCAL: fprintf(o, " +%u tc=%u", p->u.ts_local.delta, p->u.ts_local.tc); break;
    case SPOOR_ITM_TS_GLOBAL1:
        fprintf(o, " %" PRIu64 "%s%s", p->u.ts_global1.value, p->u.ts_global1.wrap ? " wrap" : "",
                p->u.ts_global1.clkch ? " clkch" : "");
        break;
    case SPOOR_ITM_TS_GLOBAL2: fprintf(o, " %" PRIu64, p->u.ts_global2.value); break;
    case SPOOR_ITM_EXTENSION:
        fprintf(o, " page %u%s", p->u.ext.page, p->u.ext.hw ? " (hw)" : "");
        break;
    case SPOOR_ITM_SW:
        fprintf(o, " port %u%s: 0x%0*x", p->u.sw.port,
                p->u.sw.page_unknown ? " (page unknown)" : "", 2 * p->u.sw.size, p->u.sw.value);
        break;
    case SPOOR_ITM_EVENT_COUNTER: {
        static const char *const names[] = {"cpi", "exc", "sleep", "lsu", "fold", "cyc"};
        for (unsigned i = 0; i < 6; i++)
            if (p->u.event_counter.bits >> i & 1)
                fprintf(o, " %s", names[i]);
        break;
    }
    case SPOOR_ITM_EXCEPTION:
        fprintf(o, " %s %u", action_name(p->u.exception.action), p->u.exception.number);
        break;
    case SPOOR_ITM_PC_SAMPLE:
        if (p->u.pc_sample.sleep) {
            fputs(" sleep", o);
        } else {
            fprintf(o, " 0x%08x", p->u.pc_sample.pc);
            print_symbol(o, elf, p->u.pc_sample.pc);
        }
        break;
    case SPOOR_ITM_DWT_PC:
        fprintf(o, " cmp %u pc 0x%08x", p->u.dwt_pc.comparator, p->u.dwt_pc.pc);
        print_symbol(o, elf, p->u.dwt_pc.pc);
        break;
    case SPOOR_ITM_DWT_MATCH: fprintf(o, " cmp %u", p->u.dwt_match.comparator); break;
    case SPOOR_ITM_DWT_ADDR:
        fprintf(o, " cmp %u offset 0x%04x", p->u.dwt_addr.comparator, p->u.dwt_addr.offset);
        break;
    case SPOOR_ITM_DWT_DATA:
        fprintf(o, " cmp %u %s 0x%0*x", p->u.dwt_data.comparator,
                p->u.dwt_data.write ? "write" : "read", 2 * p->u.dwt_data.size,
                p->u.dwt_data.value);
        break;
    case SPOOR_ITM_ERROR:
        fprintf(o, " %" PRIu64 " bytes lost: %s (detected at %" PRIu64 ")", p->u.error.bytes_lost,
                spoor_itm_error_text(p->u.error.why), p->u.error.detected_at);
        break;
    }
    putc_unlocked('\n', o);
}

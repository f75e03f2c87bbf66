#include "crash_frames.h"

#define MAX_INLINE 16

void crash_frames_json(json_out *j, const spoor_elf *elf, const spoor_frame *frames, size_t n)
{
    json_array_begin(j, "backtrace");
    for (size_t i = 0; i < n; i++) {
        const spoor_frame *f = &frames[i];
        if (f->kind == SPOOR_FRAME_EXCEPTION) {
            json_object_begin(j, NULL);
            json_hex32(j, "pc", f->pc);
            json_string(j, "kind", "exception");
            json_int(j, "exception", f->exception);
            json_string(j, "function", spoor_exception_name(f->exception));
            json_null(j, "file");
            json_null(j, "line");
            json_string(j, "method", "exception");
            json_object_end(j);
            continue;
        }
        spoor_location loc[MAX_INLINE];
        size_t nloc = spoor_elf_symbolize(elf, spoor_frame_lookup_pc(f), loc, MAX_INLINE);
        for (size_t k = 0; k < nloc; k++) {
            json_object_begin(j, NULL);
            json_hex32(j, "pc", f->pc);
            json_string(j, "kind", "frame");
            json_string(j, "function", loc[k].function);
            json_string(j, "file", loc[k].file);
            if (loc[k].file || loc[k].line) /* line 0: DWARF's "no line" in that file */
                json_uint(j, "line", loc[k].line);
            else
                json_null(j, "line");
            json_bool(j, "inlined", k + 1 < nloc);
            json_string(j, "method", spoor_unwind_method_name(f->method));
            json_bool(j, "tailcalls_possible", f->tailcalls_possible);
            json_object_end(j);
        }
    }
    json_array_end(j);
}

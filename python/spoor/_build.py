"""The cffi (API mode) builder of spoor._spoor: the declarations the package uses, checked by the
C compiler against libspoor's public headers, with libspoor linked in.

Where the build is: the environment variable SPOOR_BUILD_DIR (a CMake build folder of the
project, holding libspoor.a) and SPOOR_SOURCE_DIR (the project, holding include/ and
target/include/; default: the folder above python/).

The extension carries libspoor: the build's libspoor.a (position-independent) is linked into it,
its symbols kept local to the extension (--exclude-libs), so the module needs neither the build
folder nor an installed libspoor. What libspoor.a needs beside it (libdw, libelf, msgpack-c,
libiberty, and the sanitizer runtimes of an ASan build) is read from the build's pkg-config
template, spoor.pc.in: the shared system libraries stay run-time dependencies of the module."""
import hashlib
import os
import re
import subprocess
from pathlib import Path

from cffi import FFI

HERE = Path(__file__).resolve().parent
SOURCE_DIR = Path(os.environ.get("SPOOR_SOURCE_DIR", HERE.parent.parent))
BUILD_DIR = os.environ.get("SPOOR_BUILD_DIR")
if not BUILD_DIR:
    raise SystemExit("spoor: set SPOOR_BUILD_DIR to a CMake build folder of spoor (with libspoor.a)")
BUILD_DIR = Path(BUILD_DIR).resolve()
LIBSPOOR = BUILD_DIR / "libspoor.a"
if not LIBSPOOR.is_file():
    raise SystemExit(f"spoor: no {LIBSPOOR}: build spoor in {BUILD_DIR} first")


def libspoor_dependencies():
    """The linker arguments libspoor.a needs after it, from the build's spoor.pc.in: the
    pkg-config modules of Requires.private (their shared libraries), Libs.private, and the flags
    of Libs other than -L/-l (-fsanitize=... in an ASan build)."""
    fields = dict(re.findall(r"^([A-Za-z.]+):[ \t]*(.*)$",
                             (BUILD_DIR / "spoor.pc.in").read_text(), re.M))
    modules = fields.get("Requires.private", "").split()
    flags = subprocess.run(["pkg-config", "--libs", *modules], capture_output=True, text=True,
                           check=True).stdout.split() if modules else []
    flags += fields.get("Libs.private", "").split()
    flags += [f for f in fields.get("Libs", "").split() if not f.startswith(("-L", "-l"))]
    return flags


CDEF = """
typedef struct spoor_elf spoor_elf;
typedef struct spoor_dump spoor_dump;
typedef struct spoor_elf_dir spoor_elf_dir;
typedef struct spoor_triage spoor_triage;
typedef struct spoor_snapshot spoor_snapshot;
typedef struct spoor_crash spoor_crash;

const char *spoor_last_error(void);

spoor_elf *spoor_elf_open(const char *path);
void spoor_elf_close(spoor_elf *elf);
size_t spoor_elf_warnings(const spoor_elf *elf, const char *const **list);
bool spoor_elf_partial(const spoor_elf *elf, uint32_t addr);

typedef struct spoor_location {
    const char *function;
    uint32_t offset;
    bool has_offset;
    const char *file;
    unsigned line;
} spoor_location;
size_t spoor_elf_symbolize(const spoor_elf *elf, uint32_t addr, spoor_location *frames, size_t max);
size_t spoor_elf_symbolize_pc(const spoor_elf *elf, uint32_t pc, bool pc_is_return,
                              spoor_location *loc, size_t max);
uint32_t spoor_elf_function_offset(const spoor_elf *elf, uint32_t pc, bool pc_is_return,
                                   const spoor_location *innermost);
uint32_t spoor_lookup_pc(uint32_t pc, bool pc_is_return);

typedef struct spoor_raw_memory {
    uint32_t address;
    const char *path;
    ...;
} spoor_raw_memory;
typedef struct spoor_snapshot_source {
    const char *dump_path;
    const char *regs_path;
    const char *gdb;
    const spoor_raw_memory *mems;
    size_t nmems;
    ...;
} spoor_snapshot_source;
spoor_dump *spoor_dump_parse(const void *bytes, size_t len);
spoor_snapshot *spoor_snapshot_open(const spoor_snapshot_source *src, const spoor_elf *elf);
spoor_snapshot *spoor_snapshot_from_dump(spoor_dump *dump, const char *name, const spoor_elf *elf);
void spoor_snapshot_close(spoor_snapshot *s);

typedef struct spoor_crash_options {
    bool threads;
    ...;
} spoor_crash_options;
void spoor_py_crash_options_default(spoor_crash_options *o);
spoor_crash *spoor_crash_open(const spoor_elf *elf, spoor_snapshot *snap,
                              const spoor_crash_options *options);
void spoor_crash_close(spoor_crash *c);
char *spoor_crash_json(spoor_crash *c, size_t *len);

spoor_elf_dir *spoor_elf_dir_scan(const char *path);
void spoor_elf_dir_free(spoor_elf_dir *dir);
spoor_triage *spoor_triage_new(spoor_elf_dir *elf_dir, unsigned k);
void spoor_triage_free(spoor_triage *t);
bool spoor_triage_list_files(spoor_triage *t, const char *path, char ***paths, size_t *n);
bool spoor_triage_add_files(spoor_triage *t, char *const *paths, size_t n, unsigned threads);
char *spoor_triage_json(spoor_triage *t, bool per_dump, size_t *len);
bool spoor_triage_merge_text(spoor_triage *t, const char *text, size_t len, const char *name);
size_t spoor_triage_warnings(spoor_triage *t, const char *const **list);

typedef enum spoor_itm_type {
    SPOOR_ITM_SYNC, SPOOR_ITM_OVERFLOW, SPOOR_ITM_TS_LOCAL, SPOOR_ITM_TS_GLOBAL1,
    SPOOR_ITM_TS_GLOBAL2, SPOOR_ITM_EXTENSION, SPOOR_ITM_SW, SPOOR_ITM_EVENT_COUNTER,
    SPOOR_ITM_EXCEPTION, SPOOR_ITM_PC_SAMPLE, SPOOR_ITM_DWT_PC, SPOOR_ITM_DWT_ADDR,
    SPOOR_ITM_DWT_DATA, SPOOR_ITM_DWT_MATCH, SPOOR_ITM_ERROR, SPOOR_ITM_TYPE_COUNT
} spoor_itm_type;
typedef enum spoor_itm_exception_action {
    SPOOR_ITM_EXC_ENTER = 1, SPOOR_ITM_EXC_EXIT = 2, SPOOR_ITM_EXC_RETURN = 3
} spoor_itm_exception_action;
typedef enum spoor_itm_error_kind {
    SPOOR_ITM_ERR_RESERVED_HEADER, SPOOR_ITM_ERR_BAD_SYNC, SPOOR_ITM_ERR_BAD_PAYLOAD,
    SPOOR_ITM_ERR_TRUNCATED, SPOOR_ITM_ERR_SYNC_IN_PACKET, SPOOR_ITM_ERR_NO_SYNC
} spoor_itm_error_kind;
typedef struct spoor_itm_packet {
    spoor_itm_type type;
    uint64_t offset;
    uint64_t time;
    bool time_exact;
    uint8_t size;
    union {
        struct { uint32_t delta; uint8_t tc; } ts_local;
        struct { uint64_t value; bool wrap, clkch; } ts_global1;
        struct { uint64_t value; bool wide; } ts_global2;
        struct { uint32_t page; bool hw; } ext;
        struct { uint16_t port; uint8_t size; bool page_unknown; uint32_t value; } sw;
        struct { uint8_t bits; } event_counter;
        struct { uint16_t number; spoor_itm_exception_action action; } exception;
        struct { uint32_t pc; bool sleep; } pc_sample;
        struct { uint8_t comparator; uint32_t pc; } dwt_pc;
        struct { uint8_t comparator; uint16_t offset; } dwt_addr;
        struct { uint8_t comparator; bool write; uint8_t size; uint32_t value; } dwt_data;
        struct { uint8_t comparator; } dwt_match;
        struct { uint64_t bytes_lost; spoor_itm_error_kind why; uint64_t detected_at; } error;
    } u;
} spoor_itm_packet;
typedef struct spoor_itm_decoder { ...; } spoor_itm_decoder;
const char *spoor_itm_type_name(spoor_itm_type type);
const char *spoor_itm_error_text(spoor_itm_error_kind kind);
void spoor_itm_init(spoor_itm_decoder *d, bool require_sync);
size_t spoor_itm_feed(spoor_itm_decoder *d, const uint8_t *data, size_t len);
bool spoor_itm_next(spoor_itm_decoder *d, spoor_itm_packet *out);
void spoor_itm_finish(spoor_itm_decoder *d);

void free(void *p);
"""

SOURCE = """
#include <stdlib.h>
#include "spoor/analysis.h"
#include "spoor/dump.h"
#include "spoor/elf.h"
#include "spoor/elf_dir.h"
#include "spoor/error.h"
#include "spoor/itm_decoder.h"
#include "spoor/snapshot.h"
#include "spoor/thumb.h"
#include "spoor/triage.h"

static void spoor_py_crash_options_default(spoor_crash_options *o)
{
    spoor_crash_options d = SPOOR_CRASH_OPTIONS_DEFAULT;
    *o = d;
}
"""

# Each part of the package adds its declarations in _cdefs/<part>.cdef and, when it needs C
# beside them, _cdefs/<part>.c (read in name order, after the ones above).
for fragment in sorted((HERE / "_cdefs").glob("*.cdef")):
    CDEF += "\n" + fragment.read_text()
    c_part = fragment.with_suffix(".c")
    if c_part.is_file():
        SOURCE += "\n" + c_part.read_text()

# the library linked in, named in the generated C: another libspoor.a (rebuilt, or of another
# build folder) changes the source, so setuptools compiles and links the module again
SOURCE += "\n/* libspoor: %s, sha256 %s */\n" % (
    LIBSPOOR, hashlib.sha256(LIBSPOOR.read_bytes()).hexdigest())

ffibuilder = FFI()
ffibuilder.cdef(CDEF)
ffibuilder.set_source(
    "spoor._spoor",
    SOURCE,
    include_dirs=[str(SOURCE_DIR / "include"), str(SOURCE_DIR / "target" / "include")],
    # a declaration no public header makes (an internal function of libspoor.a) stops the build
    extra_compile_args=["-Werror=implicit-function-declaration"],
    extra_objects=[str(LIBSPOOR)],
    extra_link_args=["-Wl,--exclude-libs,ALL", *libspoor_dependencies()],
    py_limited_api=True,
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)

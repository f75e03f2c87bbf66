"""The cffi (API mode) builder of spoor._spoor: the declarations the package uses, checked by the
C compiler against libspoor's public headers, linked against a build of libspoor.

Where the build is: the environment variable SPOOR_BUILD_DIR (a CMake build folder of the
project, holding libspoor.so) and SPOOR_SOURCE_DIR (the project, holding include/ and
target/include/; default: the folder above python/)."""
import os
from pathlib import Path

from cffi import FFI

HERE = Path(__file__).resolve().parent
SOURCE_DIR = Path(os.environ.get("SPOOR_SOURCE_DIR", HERE.parent.parent))
BUILD_DIR = os.environ.get("SPOOR_BUILD_DIR")
if not BUILD_DIR:
    raise SystemExit("spoor: set SPOOR_BUILD_DIR to a CMake build folder of spoor (with libspoor.so)")
BUILD_DIR = str(Path(BUILD_DIR).resolve())

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
size_t spoor_triage_warnings(spoor_triage *t, const char *const **list);

void free(void *p);
"""

SOURCE = """
#include <stdlib.h>
#include "spoor/analysis.h"
#include "spoor/dump.h"
#include "spoor/elf.h"
#include "spoor/elf_dir.h"
#include "spoor/error.h"
#include "spoor/snapshot.h"
#include "spoor/thumb.h"
#include "spoor/triage.h"

static void spoor_py_crash_options_default(spoor_crash_options *o)
{
    spoor_crash_options d = SPOOR_CRASH_OPTIONS_DEFAULT;
    *o = d;
}
"""

ffibuilder = FFI()
ffibuilder.cdef(CDEF)
ffibuilder.set_source(
    "spoor._spoor",
    SOURCE,
    include_dirs=[str(SOURCE_DIR / "include"), str(SOURCE_DIR / "target" / "include")],
    library_dirs=[BUILD_DIR],
    runtime_library_dirs=[BUILD_DIR],
    libraries=["spoor"],
    py_limited_api=True,
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)

/* A set of firmware ELFs found by their GNU build-id: every ELF under one or more folders
 * (read recursively; debuginfod's and the distributions' .build-id/xx/rest.debug layout is one
 * such folder), so that each crash dump finds the firmware it came from. The scan reads only
 * each file's headers and build-id note; an ELF is opened (spoor_elf_open) the first time a
 * dump asks for it, once, and shared by every caller and thread until spoor_elf_dir_free(). */
#ifndef SPOOR_ELF_DIR_H
#define SPOOR_ELF_DIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spoor/elf.h"

typedef struct spoor_elf_dir spoor_elf_dir;

/* Indexes every 32-bit ARM ELF with a build-id under path (a folder, read recursively, symbolic
 * links to files followed, or one ELF file). Files that are not ELF, or are ELF of another
 * machine or without a build-id, are skipped; two files with one build-id (a file and its
 * .build-id link, a stripped ELF and its .debug file) count once (spoor_elf_dir_warnings). NULL
 * with spoor_last_error() set when path cannot be read
 * ("DIR: cannot open: ...") or holds no ELF with a build-id ("DIR: no ARM ELF with a build-id
 * (N files looked at)"). */
spoor_elf_dir *spoor_elf_dir_scan(const char *path);
void spoor_elf_dir_free(spoor_elf_dir *dir);

/* How many distinct build-ids were found. */
size_t spoor_elf_dir_count(const spoor_elf_dir *dir);

/* What the scan says besides (one line each): a folder skipped ("PATH: skipped: Permission
 * denied", "PATH: skipped: a folder deeper than 32 levels"), and a build-id found in two ELFs
 * whose code differs ("build-id HEX is in two ELFs whose code differs: A and B (A used)").
 * Of two files with one build-id the one with a symbol table and DWARF is used (a .build-id
 * tree's xx/rest.debug, not its stripped xx/rest), then the first by path. */
size_t spoor_elf_dir_warnings(const spoor_elf_dir *dir, const char *const **list);

/* The i-th ELF of the index (0 <= i < spoor_elf_dir_count) when spoor_elf_dir_open opened it,
 * else NULL: what the caller used, for its spoor_elf_warnings(). */
const spoor_elf *spoor_elf_dir_opened(const spoor_elf_dir *dir, size_t i);

/* The path of the ELF with this build-id, or NULL when none has it. */
const char *spoor_elf_dir_find(const spoor_elf_dir *dir, const uint8_t *id, size_t len);

/* The ELF with this build-id, opened on first use and owned by dir (thread-safe: the open is
 * done once, under a lock). NULL with spoor_last_error() set: "no ELF with build-id HEX in
 * DIR (N indexed)", or the error of spoor_elf_open (remembered: a broken ELF fails every time
 * without being read again). */
spoor_elf *spoor_elf_dir_open(spoor_elf_dir *dir, const uint8_t *id, size_t len);

/* The build-id of one ELF file, from its section headers' SHT_NOTE sections, without loading
 * the rest: true and at most cap bytes into id (*len the note's length, which may exceed cap)
 * when the file is a 32-bit little-endian ARM ELF with a GNU build-id note. */
bool spoor_elf_file_build_id(const char *path, uint8_t *id, size_t cap, size_t *len);

/* The GNU build-id (NT_GNU_BUILD_ID, name "GNU") among the Elf32_Nhdr records of one SHT_NOTE
 * section's contents: *id points into data. False when there is none or the records do not fit. */
bool spoor_elf_note_build_id(const uint8_t *data, size_t size, const uint8_t **id, size_t *len);

/* Lowercase hex of a build-id (at most 64 bytes) into out (2 * min(len, 64) + 1 bytes). */
char *spoor_build_id_hex(const uint8_t *id, size_t len, char *out);

#endif

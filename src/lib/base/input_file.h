/* One way to open an input file for every reader of libspoor: the ELF (elf.c), dumps,
 * regs.json and --mem images (dump.c), and trace capture files (trace_source_file.c).
 * Internal. */
#ifndef SPOOR_INPUT_FILE_H
#define SPOOR_INPUT_FILE_H

#include <stdbool.h>
#include <sys/stat.h>

/* What the reader accepts. */
typedef enum spoor_input_kind {
    SPOOR_INPUT_REGULAR, /* a regular file only: anything else is refused */
    SPOOR_INPUT_STREAM   /* anything read as bytes come (a FIFO, a device) but a directory */
} spoor_input_kind;

/* Opens path for reading: O_RDONLY | O_NONBLOCK | O_CLOEXEC, so that the open itself never
 * blocks on a FIFO or a device, then fstat() into *st. SPOOR_INPUT_REGULAR refuses anything
 * but a regular file; SPOOR_INPUT_STREAM refuses a directory, reopens a FIFO blocking (the
 * open waits for a writer, as a trace source read from a FIFO must) and makes a device's reads
 * blocking again. A file descriptor, or -1 with one line in spoor_last_error():
 * "PATH: cannot open: REASON", "PATH: not a regular file (a FIFO)" (a directory, a character
 * device, ...) or "PATH: is a directory". */
int spoor_input_open(const char *path, spoor_input_kind kind, struct stat *st);

#endif

/* A host program that uses the installed libspoor: opens a firmware ELF and symbolizes one
 * address. Prints "FUNCTION FILE:LINE" (?? and 0 for what is unknown).
 * usage: symbolize FW.elf ADDR */
#include <stdio.h>
#include <stdlib.h>

#include "spoor/elf.h"
#include "spoor/error.h"

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: symbolize FW.elf ADDR\n");
        return 2;
    }
    spoor_elf *elf = spoor_elf_open(argv[1]);
    if (elf == NULL) {
        fprintf(stderr, "symbolize: %s\n", spoor_last_error());
        return 2;
    }
    spoor_location frames[8];
    size_t count = spoor_elf_symbolize(elf, (uint32_t)strtoul(argv[2], NULL, 0), frames, 8);
    int status = 1;
    if (count > 0) {
        printf("%s %s:%u\n", frames[0].function ? frames[0].function : "??",
               frames[0].file ? frames[0].file : "??", frames[0].line);
        status = 0;
    }
    spoor_elf_close(elf);
    return status;
}

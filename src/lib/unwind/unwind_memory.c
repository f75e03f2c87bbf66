/* The unwinder's access to target memory: stack words through the caller's reader, code
 * bytes from the ELF first. Every method (cfi_unwind.c, ehabi_unwind.c, prologue_unwind.c,
 * stack_scan.c, exception_frame.c) reads through here, and unwind.c drives the methods, so
 * these helpers live apart from the walk (no call back up into unwind.c). */
#include "base/byteorder.h"
#include "unwind/unwind_frame_internal.h"

bool spoor_unwind_read_word(const unwind_env *env, uint32_t addr, uint32_t *value)
{
    uint8_t b[4];
    if ((addr & 3u) != 0 || addr > 0xFFFFFFFCu || !env->read(env->ctx, addr, b, sizeof b)) {
        return false;
    }
    *value = spoor_le32(b);
    return true;
}

bool spoor_unwind_read_code(const unwind_env *env, uint32_t addr, void *buf, size_t len)
{
    if (env->elf != NULL && spoor_elf_read(env->elf, addr, buf, len) == len) {
        return true;
    }
    return env->read(env->ctx, addr, buf, len);
}

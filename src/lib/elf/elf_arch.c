/* The architecture an ELF was built for, from its build attributes (elf_internal.h). The
 * section (ARM IHI 0045 "Addenda to, and Errata in, the ABI for the Arm Architecture" 2.2):
 * 'A', then vendor subsections { uint32 length; NTBS vendor; sub-subsections { uleb128 tag
 * (1: the whole file); uint32 length; attributes } }, each attribute a uleb128 tag and a value:
 * an NTBS for tags 4, 5, 65 and 67 and for other odd tags above 32, a uleb128 and an NTBS for
 * tag 32, else a uleb128. Tag_CPU_arch is tag 6. */
#include <string.h>

#include "base/byteorder.h"
#include "elf/elf_internal.h"

#define TAG_FILE 1
#define TAG_CPU_ARCH 6

/* A uleb128 at *p (before end); false when it runs past end or does not fit 32 bits. */
static bool uleb(const uint8_t **p, const uint8_t *end, uint32_t *v)
{
    uint64_t wide;
    if (!spoor_uleb128(p, end, &wide) || wide > UINT32_MAX)
        return false;
    *v = (uint32_t)wide;
    return true;
}

static bool skip_string(const uint8_t **p, const uint8_t *end)
{
    const uint8_t *nul = memchr(*p, 0, (size_t)(end - *p));
    if (!nul)
        return false;
    *p = nul + 1;
    return true;
}

/* Tag_CPU_arch among the attributes [p, end), or SPOOR_ELF_ARCH_UNKNOWN. */
static spoor_elf_arch cpu_arch_in(const uint8_t *p, const uint8_t *end)
{
    while (p < end) {
        uint32_t tag, value;
        if (!uleb(&p, end, &tag))
            break;
        bool string = tag == 4 || tag == 5 || tag == 65 || tag == 67 || (tag > 32 && tag % 2);
        if (tag == 32 && !uleb(&p, end, &value))
            break;
        if (string || tag == 32) {
            if (!skip_string(&p, end))
                break;
            continue;
        }
        if (!uleb(&p, end, &value))
            break;
        if (tag == TAG_CPU_ARCH)
            return (spoor_elf_arch)value;
    }
    return SPOOR_ELF_ARCH_UNKNOWN;
}

spoor_elf_arch spoor_elf_cpu_arch(const spoor_elf *elf)
{
    const struct elf_section *sec = spoor_elf_debug_section(elf, ".ARM.attributes");
    if (!sec || sec->size < 1 || sec->data[0] != 'A')
        return SPOOR_ELF_ARCH_UNKNOWN;
    const uint8_t *p = sec->data + 1, *end = sec->data + sec->size;
    while (end - p >= 4) {
        uint32_t len = spoor_le32(p);
        if (len < 4 || len > (uint32_t)(end - p))
            break;
        const uint8_t *sub = p + 4, *sub_end = p + len;
        const char *vendor = (const char *)sub;
        p = sub_end;
        if (!skip_string(&sub, sub_end) || strcmp(vendor, "aeabi"))
            continue;
        while (sub_end - sub >= 5) {
            uint32_t tag;
            const uint8_t *at = sub;
            if (!uleb(&sub, sub_end, &tag) || sub_end - sub < 4)
                break;
            uint32_t size = spoor_le32(sub);
            if (size < (uint32_t)(sub + 4 - at) || size > (uint32_t)(sub_end - at))
                break;
            if (tag == TAG_FILE)
                return cpu_arch_in(sub + 4, at + size);
            sub = at + size;
        }
    }
    return SPOOR_ELF_ARCH_UNKNOWN;
}

/* Console output and exit over Arm semihosting, with no C library underneath. */
#include "semihost.h"

void semihost_write_string(const char *text)
{
    semihost_call(SEMIHOST_SYS_WRITE0, text);
}

void semihost_write_char(char c)
{
    semihost_call(SEMIHOST_SYS_WRITEC, &c);
}

void semihost_write_decimal(uint32_t value)
{
    char digits[11];
    unsigned int at = sizeof digits - 1u;
    digits[at] = '\0';
    do {
        digits[--at] = (char)('0' + value % 10u);
        value /= 10u;
    } while (value != 0u);
    semihost_write_string(&digits[at]);
}

void semihost_write_hex(uint32_t value)
{
    static const char hex_digits[] = "0123456789abcdef";
    char text[11];
    text[0] = '0';
    text[1] = 'x';
    for (unsigned int i = 0; i < 8u; i++) {
        text[2u + i] = hex_digits[(value >> (28u - 4u * i)) & 0xFu];
    }
    text[10] = '\0';
    semihost_write_string(text);
}

static uint32_t string_length(const char *text)
{
    uint32_t length = 0;
    while (text[length] != '\0') {
        length++;
    }
    return length;
}

int semihost_open(const char *path, uint32_t mode)
{
    const uint32_t block[3] = {(uint32_t)(uintptr_t)path, mode, string_length(path)};
    return (int)semihost_call(SEMIHOST_SYS_OPEN, block);
}

uint32_t semihost_write(int handle, const void *data, uint32_t len)
{
    const uint32_t block[3] = {(uint32_t)handle, (uint32_t)(uintptr_t)data, len};
    return semihost_call(SEMIHOST_SYS_WRITE, block);
}

int semihost_close(int handle)
{
    const uint32_t block[1] = {(uint32_t)handle};
    return (int)semihost_call(SEMIHOST_SYS_CLOSE, block);
}

int semihost_get_cmdline(char *buffer, uint32_t size)
{
    /* The host writes the length it used back into the second word. */
    volatile uint32_t block[2] = {(uint32_t)(uintptr_t)buffer, size};
    if (size == 0u || semihost_call(SEMIHOST_SYS_GET_CMDLINE, (const void *)block) != 0u) {
        return 0;
    }
    if (block[1] >= size) {
        return 0;
    }
    buffer[block[1]] = '\0';
    return 1;
}

void semihost_exit(int status)
{
    if (status == 0) {
        semihost_call(SEMIHOST_SYS_EXIT, (const void *)SEMIHOST_ADP_STOPPED_APPLICATION_EXIT);
    } else {
        /* On AArch32 only the extended call carries an exit code. */
        const uint32_t block[2] = {SEMIHOST_ADP_STOPPED_APPLICATION_EXIT, (uint32_t)status};
        semihost_call(SEMIHOST_SYS_EXIT_EXTENDED, block);
        semihost_call(SEMIHOST_SYS_EXIT, (const void *)SEMIHOST_ADP_STOPPED_RUNTIME_ERROR_UNKNOWN);
    }
    for (;;) {
        /* no host took the exit request: stay here */
    }
}

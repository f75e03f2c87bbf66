/* TEMPORARY until the GDB remote client lands (branch h-gdb): every call fails. */
#include "memory_internal.h"
#include "spoor/error.h"
#include "spoor/gdb_remote.h"

spoor_gdb *spoor_gdb_connect(const char *host_port, unsigned timeout_ms)
{
    (void)timeout_ms;
    spoor_set_error(SPOOR_ERR_UNSUPPORTED, "%s: the GDB remote client is not built yet", host_port);
    return NULL;
}
void spoor_gdb_close(spoor_gdb *g)
{
    (void)g;
}
bool spoor_gdb_read_registers(spoor_gdb *g, spoor_regs *out, char *missing, size_t missing_len)
{
    (void)g, (void)out, (void)missing, (void)missing_len;
    return false;
}
int spoor_gdb_stop_signal(const spoor_gdb *g)
{
    (void)g;
    return 5;
}
bool spoor_mem_add_gdb(spoor_mem *m, spoor_gdb *g)
{
    (void)m, (void)g;
    return false;
}

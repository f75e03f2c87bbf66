/* spoor vprobe: the virtual trace probe (docs/vprobe.md). The probe is a Python tool
 * (tools/vprobe.py, which shares QEMU's log reader tools/qemu_log.py with the virtual MTB);
 * this command finds it and runs it with python3, passing every argument on. Where it looks:
 * $SPOOR_VPROBE if set, then the installed copy next to this executable
 * (SPOOR_TOOLS_RELATIVE: <prefix>/bin -> <prefix>/share/spoor/tools, see cmake/install.cmake),
 * then the source tree this spoor was built from (SPOOR_TOOLS_SOURCE_DIR). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define VPROBE_TOOL "vprobe.py"
#define MAX_ARGS 4096

static bool readable(const char *path)
{
    return access(path, R_OK) == 0;
}

/* The directory of the running executable (from /proc/self/exe) into dir; false if unknown. */
static bool executable_dir(char *dir, size_t size)
{
    ssize_t n = readlink("/proc/self/exe", dir, size - 1);
    if (n <= 0 || (size_t)n >= size - 1)
        return false;
    dir[n] = '\0';
    char *slash = strrchr(dir, '/');
    if (!slash)
        return false;
    *slash = '\0';
    return true;
}

static bool find_tool(char *path, size_t size)
{
    const char *env = getenv("SPOOR_VPROBE");
    if (env && *env) {
        if ((size_t)snprintf(path, size, "%s", env) < size && readable(path))
            return true;
        return false;
    }
    char dir[PATH_MAX];
    if (executable_dir(dir, sizeof dir) &&
        (size_t)snprintf(path, size, "%s/%s/%s", dir, SPOOR_TOOLS_RELATIVE, VPROBE_TOOL) < size &&
        readable(path))
        return true;
    return (size_t)snprintf(path, size, "%s/%s", SPOOR_TOOLS_SOURCE_DIR, VPROBE_TOOL) < size &&
           readable(path);
}

int cmd_vprobe(int argc, char **argv)
{
    char tool[PATH_MAX];
    if (!find_tool(tool, sizeof tool))
        return cli_error("vprobe", "cannot find %s (set SPOOR_VPROBE to its path)", VPROBE_TOOL);
    if (argc > MAX_ARGS)
        return cli_error("vprobe", "too many arguments (%d)", argc);
    static char *args[MAX_ARGS + 3];
    args[0] = "python3";
    args[1] = tool;
    for (int i = 1; i < argc; i++)
        args[i + 1] = argv[i];
    args[argc + 1] = NULL;
    fflush(stdout);
    execvp(args[0], args);
    return cli_error("vprobe", "python3: %s (the probe is a Python 3 program)", strerror(errno));
}

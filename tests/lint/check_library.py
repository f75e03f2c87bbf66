"""Structure checks on libspoor, run by ctest as lint/library:

1. Every symbol libspoor.a exports starts with "spoor_" (a static library's global names share
   one namespace with the application's).
2. No call cycle between src/lib files: object A calls into object B and B into A (directly or
   through others) means the two are one module in two files, or a layer calls back up.
3. No include cycle between headers (src/lib/*/*.h, include/spoor/*.h). Host and target
   headers share the prefix spoor/: no name is both an include/spoor and a target/include/spoor
   header.
4. Layers (docs/architecture.md): every file of src/lib/LAYER/ includes only headers of its own
   layer or of the layers LAYER may use (LAYERS below; a public header belongs to the layer
   PUBLIC says), never another folder's private header (NAME_internal.h; a folder's other
   headers are its interface to the layers above), and every object calls only into objects of
   those layers. Public headers obey the same rule among themselves.
7. src/util/ (helpers compiled into libspoor, neither installed nor exported) and the CLI include
   only public headers and src/util's; util is a layer every other may use, and it uses the
   layers below analysis through their public headers.
6. The unwinder (src/lib/unwind/): its methods never call one another (each may call only
   unwind_memory.c, its bounded reads, in its own layer), and only the driver, unwind.c,
   includes the list of methods (unwind_methods_internal.h) and the headers of the driver's
   other helpers (UNWIND_DRIVER_HEADERS: only their own file and unwind.c include them).
8. A public header that declares functions is named after a source that defines some of them
   (include/spoor/itm_decoder.h: src/lib/itm/itm_decoder.c) or after its layer's folder.
5. libspoor.so exports exactly the functions and variables include/spoor/*.h declares: no
   internal helper is part of the ABI, and nothing declared is missing. Every exported name
   carries a symbol version, a SPOOR_MAJOR.MINOR node the library defines, and the project's
   own version's node is among them (cmake/export_map.cmake).

Exit 1 with one line per violation."""
import os
import re
import subprocess
import sys
from pathlib import Path

SOURCE = Path(os.environ.get("SPOOR_SOURCE_DIR", Path(__file__).resolve().parents[2]))
BUILD = Path(os.environ.get("SPOOR_BUILD_DIR", SOURCE / "build" / "check"))
LIB = Path(sys.argv[1]) if len(sys.argv) > 1 else BUILD / "libspoor.a"


# What each layer may use besides itself. base < arch < elf < remote < snapshot < unwind < rtos,
# with itm and flow beside unwind and rtos: they read through snapshots, never unwind.
ORDER = ["base", "arch", "elf", "remote", "snapshot", "unwind", "rtos"]
LAYERS = {layer: set(ORDER[:i]) for i, layer in enumerate(ORDER)}
LAYERS["itm"] = set(ORDER[:ORDER.index("snapshot") + 1])
LAYERS["flow"] = LAYERS["itm"] | {"itm"}
# triage signs dumps (snapshot, unwind) and sits above every other layer.
LAYERS["triage"] = set(ORDER) | {"itm", "flow"}
# check reads a firmware ELF alone (its code through Thumb facts): elf and below.
LAYERS["check"] = set(ORDER[:ORDER.index("elf") + 1])
# util (src/util/, beside src/lib): helpers compiled into libspoor but neither installed nor
# exported (the text and JSON writers, the JSON of records several reports share); every layer
# and the CLI may use them. They use the layers below analysis through their public headers only
# (check_includes), and no call may come back round (the call-cycle check).
for _layer in LAYERS:
    LAYERS[_layer].add("util")
LAYERS["util"] = set(ORDER) | {"itm", "flow"}

# The layer of each public header. The target's record layouts (target/include/spoor/) are
# shared with the firmware and include nothing of the host: they count as base.
PUBLIC = {
    "base": "error.h read.h",
    "arch": "regs.h fault.h thumb.h",
    "elf": "elf.h elf_dir.h",
    "remote": "gdb_remote.h gdb_rsp.h openocd.h",
    "snapshot": "dump.h dump_formats.h memory.h snapshot.h",
    "unwind": "unwind.h",
    "rtos": "rtos.h stack_usage.h",
    "itm": "itm_decoder.h tpiu_deframer.h trace_source.h top_stats.h trace_pump.h dwt_setup.h",
    "flow": "call_stack.h calls_decode.h mtb_decode.h",
    "triage": "triage.h",
    "check": "firmware_check.h",
}


def header_layer(inc, target_headers):
    """The layer of an #include "..." name, or None when it is not libspoor's."""
    if "/" not in inc:
        return None
    folder, name = inc.split("/", 1)
    if folder == "spoor":
        if name in target_headers:
            return "base"
        for layer, names in PUBLIC.items():
            if name in names.split():
                return layer
        return "unknown"
    return folder if folder in LAYERS else None


def check_layers(problems):
    lib = SOURCE / "src" / "lib"
    target_headers = {h.name for h in (SOURCE / "target" / "include" / "spoor").glob("*.h")}
    public = {h.name for h in (SOURCE / "include" / "spoor").glob("*.h")}
    # host and target headers share the prefix spoor/: a name may be one side's only
    for name in sorted(public & target_headers):
        problems.append(f"include/spoor/{name} and target/include/spoor/{name}: one name for "
                        "two headers under the one prefix spoor/")
    for name in sorted(public):
        if header_layer("spoor/" + name, target_headers) == "unknown":
            problems.append(f"include/spoor/{name}: no layer (add it to PUBLIC in {Path(__file__).name})")
    files = [(f, f.parent.name) for f in sorted(lib.glob("*/*.[ch]"))]
    files += [(f, "util") for f in sorted((SOURCE / "src" / "util").glob("*.[ch]"))]
    files += [(lib / f.name, None) for f in sorted(lib.glob("*.[ch]"))]
    files += [(SOURCE / "include" / "spoor" / n, header_layer("spoor/" + n, target_headers))
              for n in sorted(public)]
    for f, layer in files:
        rel = f.relative_to(SOURCE)
        if layer not in LAYERS:
            problems.append(f"{rel}: not in a layer folder ({', '.join(LAYERS)})")
            continue
        for inc in re.findall(r'^#include\s+"([^"]+)"', f.read_text(), re.M):
            used = header_layer(inc, target_headers)
            if used is None or used == "unknown" or used == layer:
                continue
            if inc.endswith("_internal.h"):
                problems.append(f"{rel}: includes {inc}, a private header of layer {used}")
            elif used not in LAYERS[layer]:
                problems.append(f"{rel}: layer {layer} includes {inc} of layer {used}")

#The unwinder's driver, the one object its methods may share, and the headers only the driver
#(and the file a header declares) include.
UNWIND_DRIVER = "unwind.c"
UNWIND_SHARED = "unwind_memory.c"
UNWIND_DRIVER_HEADERS = {
    "unwind/unwind_methods_internal.h": None,
    "unwind/unwind_exception_internal.h": "exception_frame.c",
    "unwind/unwind_task_entry_internal.h": "task_entry.c",
}


def check_unwinder(problems, calls):
    folder = SOURCE / "src" / "lib" / "unwind"
    for f in sorted(folder.glob("*.[ch]")):
        for inc in re.findall(r'^#include\s+"([^"]+)"', f.read_text(), re.M):
            if inc in UNWIND_DRIVER_HEADERS and f.name not in (UNWIND_DRIVER,
                                                                UNWIND_DRIVER_HEADERS[inc]):
                problems.append(f"{f.relative_to(SOURCE)}: includes {inc}, which only "
                                f"{UNWIND_DRIVER} includes")
    parts = {f"{f.name}.o" for f in folder.glob("*.c")}
    for obj in sorted(parts - {f"{UNWIND_DRIVER}.o"}):
        for callee in sorted(calls.get(obj, ()) & parts):
            if callee != f"{UNWIND_SHARED}.o":
                problems.append(f"{obj} calls into {callee}: an unwind method or helper calls "
                                f"only {UNWIND_SHARED}, the driver does the rest")


def declared_names(headers, inline_headers=()):
    """Functions and variables the headers declare (static inline definitions of these or of
    inline_headers excluded: one header's inline function may call another's)."""
    names, inline = set(), set()
    for h in list(headers) + list(inline_headers):
        text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", h.read_text(), flags=re.S)
        if h in headers:
            names |= set(re.findall(r"\b(spoor_\w+)\s*\(", text))
            names |= set(re.findall(r"^extern\s[^;(]*\b(spoor_\w+)\s*(?:\[[^]]*\])?\s*;", text,
                                    re.M))
        inline |= set(re.findall(r"static\s+inline\s[^;{(]*\b(spoor_\w+)\s*\(", text))
    return names - inline


def check_exports(problems):
    shared = LIB.parent / "libspoor.so"
    if not shared.exists():
        problems.append(f"{shared}: not built, exports not checked")
        return
    out = subprocess.run(["nm", "-D", "--defined-only", str(shared)], capture_output=True,
                         text=True, check=True).stdout
    exported = {m.group(1) for m in re.finditer(r"\s[A-Z]\s+(\w+?)(?:@@?\S+)?$", out, re.M)}
    exported = {n for n in exported if n.startswith("spoor_")}
    host_headers = sorted((SOURCE / "include" / "spoor").glob("*.h"))
    target_headers = sorted((SOURCE / "target" / "include" / "spoor").glob("*.h"))
    host = declared_names(host_headers, target_headers)
    target = declared_names(target_headers)
    for n in sorted(exported - host - target):
        problems.append(f"libspoor.so exports {n}, which no public header declares")
    for n in sorted(host - exported):
        problems.append(f"include/spoor declares {n}, which libspoor.so does not export")
    check_versions(problems, shared)


def check_versions(problems, shared):
    """Every exported spoor_ name has a version node of the library's own (objdump -T), and
    the node of the project's version is defined (objdump -p)."""
    version = re.search(r"project\(spoor VERSION (\d+)\.(\d+)",
                        (SOURCE / "CMakeLists.txt").read_text())
    node = f"SPOOR_{version.group(1)}.{version.group(2)}"
    head = subprocess.run(["objdump", "-p", str(shared)], capture_output=True, text=True,
                          check=True).stdout
    defs = head.split("Version definitions:", 1)[1].split("Version References:", 1)[0] \
        if "Version definitions:" in head else ""
    defined = set(re.findall(r"^\s*\d+\s+0x\S+\s+0x\S+\s+(SPOOR_\d+\.\d+)\s*$", defs, re.M))
    if node not in defined:
        problems.append(f"libspoor.so defines no symbol version {node} (the project's version)")
    table = subprocess.run(["objdump", "-T", str(shared)], capture_output=True, text=True,
                           check=True).stdout
    for m in re.finditer(r"^[0-9a-f]+\s.*\s(\S+)\s+(spoor_\w+)$", table, re.M):
        ver, name = m.groups()
        if "*UND*" in m.group(0):
            continue
        if ver not in defined:
            problems.append(f"libspoor.so exports {name} with version {ver}, not a SPOOR_ node "
                            "of cmake/export_map.cmake")


def check_includes(problems):
    """The CLI includes its own headers, the public ones and src/util's, nothing else of src; so
    does src/util (never a layer's own header)."""
    for folder in ("cli", "util"):
        d = SOURCE / "src" / folder
        own = {f.name for f in d.glob("*.[ch]")} | {
    "commands.def"} if folder == "cli" else set()
        for f in sorted(d.glob("*.[ch]")):
            for inc in re.findall(r'^#include\s+"([^"]+)"', f.read_text(), re.M):
                if inc not in own and not inc.startswith(("spoor/", "util/")):
                    problems.append(f"{f.relative_to(SOURCE)}: includes {inc}, neither a public "
                                    f"header (spoor/) nor a helper of src/util")


def check_header_names(problems, owner):
    """Every include/spoor/NAME.h that declares functions libspoor defines has NAME.c among the
    objects that define them, or is its layer's folder's name (spoor/analysis.h)."""
    target = sorted((SOURCE / "target" / "include" / "spoor").glob("*.h"))
    for h in sorted((SOURCE / "include" / "spoor").glob("*.h")):
        sources = {owner[n] for n in declared_names([h], target) if n in owner}
        if sources and f"{h.stem}.c.o" not in sources and \
                not (SOURCE / "src" / "lib" / h.stem).is_dir():
            problems.append(f"include/spoor/{h.name}: named after none of its sources "
                            f"({', '.join(sorted(o[:-2] for o in sources))}): rename the header "
                            "or the source")


def object_layers():
    """{object file name: layer} for libspoor.a's members."""
    layers = {f"{f.name}.o": f.parent.name for f in (SOURCE / "src" / "lib").glob("*/*.c")}
    for f in (SOURCE / "src" / "util").glob("*.c"):
        layers[f"{f.name}.o"] = "util"
    for f in (SOURCE / "target" / "src").glob("*.c"):
        layers[f"{f.name}.o"] = "base"
    return layers


def nm_objects(lib):
    """{object: (defined globals, undefined names)} from nm -A."""
    out = subprocess.run(["nm", "-A", str(lib)], capture_output=True, text=True, check=True).stdout
    objects = {}
    for line in out.splitlines():
        m = re.match(r"^[^:]+:([^:]+):\s*(?:[0-9a-fA-F]+)?\s+([A-Za-z])\s+(\S+)$", line)
        if not m:
            continue
        obj, kind, name = m.groups()
        defined, undefined = objects.setdefault(obj, (set(), set()))
        if kind == "U":
            undefined.add(name)
        elif kind.isupper():
            defined.add(name)
    return objects


def tool_symbol(name):
    """Names the compiler or sanitizers add, not ours."""
    return name.startswith(("__odr_asan", "__asan", "__ubsan", "__sancov", "_GLOBAL_"))


def cycles(graph):
    """Strongly connected components with more than one node (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    problems = []
    objects = nm_objects(LIB)
    owner = {}
    for obj, (defined, _) in objects.items():
        for name in defined:
            owner[name] = obj
            if not name.startswith("spoor_") and not tool_symbol(name):
                problems.append(f"{LIB.name}: {obj} exports '{name}' without the spoor_ prefix")
    calls = {
obj : {owner[n] for n in undefined if n in owner and owner[n] != obj
}
             for
                 obj, (_, undefined)in objects.items()}
    for comp in cycles(calls):
        problems.append("call cycle between " + ", ".join(comp))
    layer_of = object_layers()
    for obj, callees in sorted(calls.items()):
        for callee in sorted(callees):
            a, b = layer_of.get(obj), layer_of.get(callee)
            if a and b and a != b and b not in LAYERS[a]:
                problems.append(f"{obj} (layer {a}) calls into {callee} (layer {b})")
    check_layers(problems)
    check_includes(problems)
    check_header_names(problems, owner)
    check_unwinder(problems, calls)
    check_exports(problems)

    headers = list((SOURCE / "src" / "lib").glob("*/*.h")) + \
        list((SOURCE / "src" / "util").glob("*.h")) + \
        list((SOURCE / "include" / "spoor").glob("*.h"))
    by_name = {}
    for h in headers:
        key = f"spoor/{h.name}" if h.parent.name == "spoor" else f"{h.parent.name}/{h.name}"
        by_name[key] = h
    includes = {}
    for key, h in by_name.items():
        text = h.read_text()
        includes[key] = {inc for inc in re.findall(r'^#include\s+"([^"]+)"', text, re.M)
                         if inc in by_name}
    for comp in cycles(includes):
        problems.append("include cycle between " + ", ".join(comp))

    for p in problems:
        print(p)
    print(f"{len(objects)} objects, {len(by_name)} headers: "
          f"{'ok' if not problems else f'{len(problems)} problems'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

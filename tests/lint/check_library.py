"""Structure checks on libspoor, run by ctest as lint/library:

1. Every symbol libspoor.a exports starts with "spoor_" (a static library's global names share
   one namespace with the application's).
2. No call cycle between src/lib files: object A calls into object B and B into A (directly or
   through others) means the two are one module in two files, or a layer calls back up.
3. No include cycle between headers (src/lib/*.h, include/spoor/*.h).

Exit 1 with one line per violation."""
import os
import re
import subprocess
import sys
from pathlib import Path

SOURCE = Path(os.environ.get("SPOOR_SOURCE_DIR", Path(__file__).resolve().parents[2]))
BUILD = Path(os.environ.get("SPOOR_BUILD_DIR", SOURCE / "build" / "check"))
LIB = Path(sys.argv[1]) if len(sys.argv) > 1 else BUILD / "libspoor.a"


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
    calls = {obj: {owner[n] for n in undefined if n in owner and owner[n] != obj}
             for obj, (_, undefined) in objects.items()}
    for comp in cycles(calls):
        problems.append("call cycle between " + ", ".join(comp))

    headers = list((SOURCE / "src" / "lib").glob("*.h")) + \
        list((SOURCE / "include" / "spoor").glob("*.h"))
    by_name = {}
    for h in headers:
        key = f"spoor/{h.name}" if h.parent.name == "spoor" else h.name
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

"""The ITM, DWT and DEMCR register addresses, read from the one table of them the target library
and libspoor use (target/include/spoor/itm_watch.h, its `#define SPOOR_...` lines), so that the
virtual probe's tools do not declare them a second time.

    REGS["DEMCR"], REGS["ITM_TCR"], ...   plain registers
    reg("DWT_COMP", 1)                     the per-comparator and per-port ones at index n
"""
import os
import re

_HERE = os.path.dirname(os.path.abspath(__file__))
# the source tree (tools/ beside target/) and an installed share/spoor (tools/ beside target/)
_HEADER = os.path.join(_HERE, "..", "target", "include", "spoor", "itm_watch.h")

_PLAIN = re.compile(r"^#define SPOOR_(\w+) (0x[0-9A-Fa-f]+)u\b", re.M)
_INDEXED = re.compile(r"^#define SPOOR_(\w+)\(n\) \((0x[0-9A-Fa-f]+)u \+ (\d+)u \* \(n\)\)", re.M)


def _load(path):
    with open(path) as f:
        text = f.read()
    plain = {name: int(value, 16) for name, value in _PLAIN.findall(text)}
    indexed = {name: (int(base, 16), int(step)) for name, base, step in _INDEXED.findall(text)}
    return plain, indexed


REGS, _INDEXED_REGS = _load(_HEADER)


def reg(name, n):
    """The address of register `name` (DWT_COMP, DWT_MASK, DWT_FUNCTION, ITM_STIM) at index n."""
    base, step = _INDEXED_REGS[name]
    return base + step * n

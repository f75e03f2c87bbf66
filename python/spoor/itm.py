"""ITM/DWT trace decoding (Cortex-M's Instrumentation Trace Macrocell protocol), by libspoor's
decoder: each packet as the object `spoor itm --json` prints (docs/itm.md).

    for packet in spoor.itm.decode("capture.swo"):      # a path, bytes or a binary file
        if packet["type"] == "sw":
            print(packet["port"], packet["value"])

    decoder = spoor.itm.Decoder()                         # a live source, chunk by chunk
    for chunk in source:
        for packet in decoder.feed(chunk):
            ...
    rest = decoder.finish()
"""
from __future__ import annotations

import os
from typing import Any, BinaryIO, Dict, Iterator, List, Union

from ._spoor import ffi, lib

__all__ = ["Decoder", "decode"]

_CHUNK = 1 << 16
_ACTIONS = {lib.SPOOR_ITM_EXC_ENTER: "enter", lib.SPOOR_ITM_EXC_EXIT: "exit"}


def _packet_dict(p: Any) -> Dict[str, Any]:
    """One packet as spoor itm --json prints it."""
    t = p.type
    out: Dict[str, Any] = {"type": ffi.string(lib.spoor_itm_type_name(t)).decode(),
                           "offset": p.offset, "time": p.time}
    u = p.u
    if t == lib.SPOOR_ITM_TS_LOCAL:
        out.update(delta=u.ts_local.delta, tc=u.ts_local.tc)
    elif t == lib.SPOOR_ITM_TS_GLOBAL1:
        out.update(value=u.ts_global1.value, wrap=bool(u.ts_global1.wrap),
                   clkch=bool(u.ts_global1.clkch))
    elif t == lib.SPOOR_ITM_TS_GLOBAL2:
        out["value"] = u.ts_global2.value
    elif t == lib.SPOOR_ITM_EXTENSION:
        out["page"] = u.ext.page
        if u.ext.hw:
            out["hw"] = True
    elif t == lib.SPOOR_ITM_SW:
        out["port"] = u.sw.port
        if u.sw.page_unknown:
            out["page_unknown"] = True
        out.update(size=u.sw.size, value=u.sw.value)
    elif t == lib.SPOOR_ITM_EVENT_COUNTER:
        b = u.event_counter.bits
        out.update(cpi=b & 1, exc=b >> 1 & 1, sleep=b >> 2 & 1, lsu=b >> 3 & 1,
                   fold=b >> 4 & 1, cyc=b >> 5 & 1)
    elif t == lib.SPOOR_ITM_EXCEPTION:
        out.update(number=u.exception.number,
                   action=_ACTIONS.get(u.exception.action, "return"))
    elif t == lib.SPOOR_ITM_PC_SAMPLE:
        out["pc"] = None if u.pc_sample.sleep else u.pc_sample.pc
    elif t == lib.SPOOR_ITM_DWT_PC:
        out.update(comparator=u.dwt_pc.comparator, pc=u.dwt_pc.pc)
    elif t == lib.SPOOR_ITM_DWT_MATCH:
        out["comparator"] = u.dwt_match.comparator
    elif t == lib.SPOOR_ITM_DWT_ADDR:
        out.update(comparator=u.dwt_addr.comparator, addr_offset=u.dwt_addr.offset)
    elif t == lib.SPOOR_ITM_DWT_DATA:
        out.update(comparator=u.dwt_data.comparator, write=bool(u.dwt_data.write),
                   size=u.dwt_data.size, value=u.dwt_data.value)
    elif t == lib.SPOOR_ITM_ERROR:
        why = ffi.string(lib.spoor_itm_error_text(u.error.why)).decode()
        out.update(bytes_lost=u.error.bytes_lost,
                   why=f"{why} (detected at {u.error.detected_at})")
    return out


class Decoder:
    """A streaming ITM decoder: feed() it bytes as they come, take the packets it returns;
    finish() at the end of the stream. wait_sync: ignore the bytes before the first
    synchronization packet (spoor itm --wait-sync)."""

    def __init__(self, wait_sync: bool = False) -> None:
        self._d = ffi.new("spoor_itm_decoder *")
        self._packet = ffi.new("spoor_itm_packet *")
        lib.spoor_itm_init(self._d, wait_sync)

    def _drain(self, out: List[Dict[str, Any]]) -> None:
        while lib.spoor_itm_next(self._d, self._packet):
            out.append(_packet_dict(self._packet))

    def feed(self, data: bytes) -> List[Dict[str, Any]]:
        """Decodes data; returns the packets it released (a packet is held until the timestamp
        after it dates it)."""
        out: List[Dict[str, Any]] = []
        buf = ffi.from_buffer(data)
        done, size = 0, len(buf)
        while done < size:
            done += lib.spoor_itm_feed(self._d, buf + done, size - done)
            self._drain(out)
        return out

    def finish(self) -> List[Dict[str, Any]]:
        """The end of the stream: releases every held packet (a packet cut short becomes an
        error packet) and returns them."""
        lib.spoor_itm_finish(self._d)
        out: List[Dict[str, Any]] = []
        self._drain(out)
        return out


def decode(data: Union[bytes, BinaryIO, str, "os.PathLike[str]"],
           wait_sync: bool = False) -> Iterator[Dict[str, Any]]:
    """Every packet of a capture, in stream order: the objects `spoor itm --json FILE` prints.
    data: the bytes, a binary file object, or a path."""
    decoder = Decoder(wait_sync)
    if isinstance(data, (bytes, bytearray, memoryview)):
        yield from decoder.feed(data)
    elif hasattr(data, "read"):
        while True:
            chunk = data.read(_CHUNK)  # type: ignore[union-attr]
            if not chunk:
                break
            yield from decoder.feed(chunk)
    else:
        with open(os.fspath(data), "rb") as f:  # type: ignore[arg-type]
            yield from decode(f, wait_sync)
            return
    yield from decoder.finish()

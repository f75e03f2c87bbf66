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

    for packet in spoor.itm.decode("capture.tpiu", tpiu=True):   # TPIU-formatted (spoor itm
        print(packet["stream"], packet["type"])                   # --tpiu): every trace ID
"""
from __future__ import annotations

import os
from typing import Any, BinaryIO, Dict, Iterator, List, Optional, Union

from ._spoor import ffi, lib

__all__ = ["Decoder", "decode"]

_CHUNK = 1 << 16
_ACTIONS = {lib.SPOOR_ITM_EXC_ENTER: "enter", lib.SPOOR_ITM_EXC_EXIT: "exit"}


def _packet_dict(p: Any, stream: Optional[int] = None) -> Dict[str, Any]:
    """One packet as spoor itm --json prints it (stream: its TPIU trace source ID, as
    --tpiu prints it)."""
    t = p.type
    out: Dict[str, Any] = {"type": ffi.string(lib.spoor_itm_type_name(t)).decode(),
                           "offset": p.offset, "time": p.time}
    if stream is not None:
        out["stream"] = stream
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


def _error(message: str) -> Exception:
    from . import Error  # the package's, raised by every part of it
    return Error(message)


def _pump_config(wait_sync: bool, tpiu: Union[bool, int], align: Optional[int]) -> Any:
    """The trace pump's configuration of spoor itm --tpiu[=ID] [--align=N] [--wait-sync]."""
    cfg = ffi.new("spoor_trace_pump_config *")
    lib.spoor_trace_pump_config_init(cfg)
    cfg.tpiu = True
    cfg.wait_sync = bool(wait_sync)
    if tpiu is not True:
        if isinstance(tpiu, bool) or not isinstance(tpiu, int) or not 1 <= tpiu < 0x70:
            raise _error(f"tpiu={tpiu!r}: an ID is 1..111 (or True: every ID)")
        cfg.tpiu_id = tpiu
    if align is not None:
        if isinstance(align, bool) or not isinstance(align, int) or not 0 <= align <= 15:
            raise _error(f"align={align!r}: expected 0..15")
        cfg.tpiu_align = align
    return cfg


class Decoder:
    """A streaming ITM decoder: feed() it bytes as they come, take the packets it returns;
    finish() at the end of the stream. wait_sync: ignore the bytes before the first
    synchronization packet (spoor itm --wait-sync).

    tpiu: the stream is TPIU-formatted (16-byte frames of the CoreSight formatter, as
    `spoor itm --tpiu` reads it): True deframes it and decodes every trace source ID, each
    with its own decoder; an ID (1..111) decodes that one only (--tpiu=ID). Each packet then
    carries its "stream" (the trace source ID). align: the frames start at this byte offset
    (0..15, --align=N) instead of being found (a full sync, or the alignment that decodes
    best)."""

    def __init__(self, wait_sync: bool = False, *, tpiu: Union[bool, int] = False,
                 align: Optional[int] = None) -> None:
        self._packet = ffi.new("spoor_itm_packet *")
        self._pump: Any = None
        if tpiu is False or tpiu is None:
            if align is not None:
                raise _error("align is the TPIU frames' offset: give tpiu too")
            self._d = ffi.new("spoor_itm_decoder *")
            lib.spoor_itm_init(self._d, wait_sync)
            return
        pump = lib.spoor_py_itm_pump_new(_pump_config(wait_sync, tpiu, align))
        if pump == ffi.NULL:
            raise _error(ffi.string(lib.spoor_last_error()).decode() or "out of memory")
        self._pump = ffi.gc(pump, lib.spoor_py_itm_pump_free)

    def _drain(self, out: List[Dict[str, Any]]) -> None:
        while lib.spoor_itm_next(self._d, self._packet):
            out.append(_packet_dict(self._packet))

    def _take(self, ok: bool) -> List[Dict[str, Any]]:
        """The packets the pump released (each with its stream)."""
        pump = self._pump
        out = [_packet_dict(pump.packets[i], pump.streams[i]) for i in range(pump.n)]
        lib.spoor_py_itm_pump_clear(pump)
        if not ok:
            raise _error("out of memory")
        return out

    def feed(self, data: bytes) -> List[Dict[str, Any]]:
        """Decodes data; returns the packets it released (a packet is held until the timestamp
        after it dates it)."""
        buf = ffi.from_buffer(data)
        if self._pump is not None:
            return self._take(lib.spoor_py_itm_pump_feed(self._pump, buf, len(buf)))
        out: List[Dict[str, Any]] = []
        done, size = 0, len(buf)
        while done < size:
            done += lib.spoor_itm_feed(self._d, buf + done, size - done)
            self._drain(out)
        return out

    def finish(self) -> List[Dict[str, Any]]:
        """The end of the stream: releases every held packet (a packet cut short becomes an
        error packet) and returns them."""
        if self._pump is not None:
            return self._take(lib.spoor_py_itm_pump_finish(self._pump))
        lib.spoor_itm_finish(self._d)
        out: List[Dict[str, Any]] = []
        self._drain(out)
        return out

    def tpiu_stats(self) -> Optional[Dict[str, Any]]:
        """With tpiu: the TPIU deframer's counters so far and how it chose the frame alignment,
        the object `spoor itm --tpiu --json --stats` prints ({"type": "tpiu", "bytes",
        "frames", "full_syncs", "half_syncs", "id_changes", "skipped", "why"}); None
        without tpiu."""
        if self._pump is None:
            return None
        t = lib.spoor_trace_pump_tpiu(self._pump.pump)
        st = t.stats
        return {"type": "tpiu", "bytes": st.bytes, "frames": st.frames,
                "full_syncs": st.full_syncs, "half_syncs": st.half_syncs,
                "id_changes": st.id_changes, "skipped": st.skipped,
                "why": ffi.string(t.why).decode("utf-8", "replace")}


def decode(data: Union[bytes, BinaryIO, str, "os.PathLike[str]"],
           wait_sync: bool = False, *, tpiu: Union[bool, int] = False,
           align: Optional[int] = None) -> Iterator[Dict[str, Any]]:
    """Every packet of a capture, in stream order: the objects `spoor itm --json FILE` prints.
    data: the bytes, a binary file object, or a path. tpiu, align: a TPIU-formatted capture,
    as Decoder takes them (`spoor itm --tpiu[=ID] [--align=N] --json FILE`)."""
    decoder = Decoder(wait_sync, tpiu=tpiu, align=align)
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
            yield from decode(f, wait_sync, tpiu=tpiu, align=align)
            return
    yield from decoder.finish()

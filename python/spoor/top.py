"""RTOS thread and exception profiling over ITM/DWT, by libspoor's `spoor top` session
(include/spoor/top_session.h): the bytes of a trace stream in, the interval tables out, each the
object `spoor top --json` writes for an interval (docs/top.md, "JSON").

    with spoor.top.Session("fw.elf", cpu_freq=25_000_000, interval=1, exceptions=True,
                           mem={0x20000000: "ram.bin"}) as session:
        for chunk in source:                      # a live stream, chunk by chunk
            for interval in session.feed(chunk):  # the intervals this chunk completed
                print(interval["cpu_usage"], [t["name"] for t in interval["threads"]])
        rest = session.finish()                   # the last interval, cut short, and the summary

    intervals = spoor.top.run("fw.elf", "capture.itm", cpu_freq=25_000_000, dump="crash.bin")
"""
from __future__ import annotations

import json
import os
import tempfile
from typing import Any, BinaryIO, Dict, Iterator, List, Mapping, Optional, Union

from . import Elf, Error, _image_file, _raise, _snapshot_source, _text
from ._spoor import ffi, lib

__all__ = ["Session", "run"]

PathLike = Union[str, "os.PathLike[str]"]
Bytes = Union[bytes, bytearray, memoryview]

_CHUNK = 1 << 16
_PRESCALERS = (1, 4, 16, 64)


def _check_int(name: str, value: Any, low: int, high: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise Error(f"{name}={value!r}: {what}")
    return value


class Session:
    """A run of `spoor top` fed the bytes of a trace stream: each feed() returns the intervals
    the bytes completed, finish() the last one (cut short) and the summary of the run, each the
    object `spoor top --json` writes for it. A context manager; close() releases it.

    elf: the firmware (an Elf, which must stay open while the session runs, or a path, opened
    and closed with the session), built with -g (the RTOS layer reads its DWARF types).
    The keywords are spoor top's flags:
      cpu_freq (-F, required): the core clock in Hz; timestamps count its cycles.
      interval (-I): the interval in ms (1000). intervals (-n): stop after that many, with no
        summary (0: at the end of the stream).
      exceptions (-E): exception statistics ("exceptions" in each interval).
      comparator (--comparator): the DWT comparator watching the current-thread pointer (1).
      prescaler (--prescaler): cycles per local timestamp tick, 1, 4, 16 or 64.
      tpiu (-t/--tpiu[=ID], -p TPIU): the stream is TPIU-formatted; True decodes trace source
        ID 1, an int (1..111) that ID.
      rtos (-T): "auto" (the RTOS whose current-thread symbol the ELF has; with none, threads
        are TCB addresses and a line in .warnings says so), "freertos", "rtx5", "zephyr",
        "threadx", "sched".
      target memory, for thread names, priorities, entry functions and states: mem (--mem:
        {address: image path or bytes}), dump (DUMP: a crash dump's path or bytes), gdb
        (--gdb "HOST:PORT": a GDB server), telnet (-W "[HOST:]PORT" or "tcl:[HOST:]PORT":
        OpenOCD). stack (--stack): each thread's "stack" use (needs target memory).
      live (what -s implies): the bytes come from a running target as they are sent: a stream
        without local timestamps is timed by the host's clock, and a target behind gdb runs,
        halted for each batch of reads.
    Warnings and notes spoor top would print on stderr are in .warnings."""

    def __init__(self, elf: Union[Elf, PathLike], *, cpu_freq: int,
                 tpiu: Union[bool, int] = False, rtos: str = "auto", prescaler: int = 1,
                 interval: int = 1000, intervals: int = 0, exceptions: bool = False,
                 comparator: int = 1, stack: bool = False,
                 mem: Optional[Mapping[int, Union[PathLike, Bytes]]] = None,
                 dump: Union[PathLike, Bytes, None] = None, gdb: Optional[str] = None,
                 telnet: Optional[str] = None, live: bool = False) -> None:
        self._t: Any = None
        self._rtos: Any = None
        self._target: Any = None
        self._own_elf: Optional[Elf] = None
        self._keep: List[Any] = []
        self._finished = False
        self.warnings: List[str] = []
        self.comparator = _check_int("comparator", comparator, 0, 3,
                                     "the data trace packet names comparators 0..3")
        _check_int("cpu_freq", cpu_freq, 1, 0xFFFFFFFF, "expected the CPU clock in Hz")
        _check_int("interval", interval, 1, 0xFFFFFFFF, "expected milliseconds (1 or more)")
        _check_int("intervals", intervals, 0, 0xFFFFFFFF, "expected a count (0: no limit)")
        if prescaler not in _PRESCALERS or isinstance(prescaler, bool):
            raise Error(f"prescaler={prescaler!r}: ITM_TCR.TSPrescale divides by 1, 4, 16 or 64")
        tpiu_id = 0
        if tpiu is not False and tpiu is not None:
            tpiu_id = 1 if tpiu is True else _check_int("tpiu", tpiu, 1, 0x6F,
                                                        "an ID is 1..111 (True: 1)")
        if gdb is not None and telnet is not None:
            raise Error("give one live target: telnet or gdb")
        if stack and not (mem or dump is not None or gdb or telnet):
            raise Error("stack reads the threads' stacks from target memory: give mem, dump, "
                        "gdb or telnet")
        try:
            self._open(elf, rtos, mem, dump, gdb, telnet)
            cfg = ffi.new("spoor_top_session_config *")
            cfg.cpu_hz = cpu_freq
            cfg.interval_ms = interval
            cfg.prescaler = prescaler
            cfg.comparator = comparator
            cfg.live = bool(live)
            cfg.stack = bool(stack)
            cfg.max_intervals = intervals
            cfg.elf = self._elf._ptr()
            cfg.rtos = self._rtos if self._rtos is not None else ffi.NULL
            cfg.target = self._target if self._target is not None else ffi.NULL
            pump = ffi.new("spoor_trace_pump_config *")
            lib.spoor_trace_pump_config_init(pump)
            pump.tpiu = tpiu_id != 0
            pump.tpiu_id = tpiu_id or 1
            t = lib.spoor_py_top_new(cfg, pump, lib.SPOOR_TOP_JSON_EXCEPTIONS if exceptions
                                     else 0)
            if t == ffi.NULL:
                _raise("out of memory")
            self._t = t
            self._collect_notices()
            self._check_lost()
        except BaseException:
            self.close()
            raise

    def _open(self, elf: Union[Elf, PathLike], kind: str,
              mem: Optional[Mapping[int, Union[PathLike, Bytes]]],
              dump: Union[PathLike, Bytes, None], gdb: Optional[str],
              telnet: Optional[str]) -> None:
        """The ELF, the RTOS layer and the target memory, as spoor top opens them."""
        if not isinstance(elf, Elf):
            elf = self._own_elf = Elf(elf)
        self._elf = elf
        none = ffi.new("bool *")
        rtos = lib.spoor_py_top_rtos(elf._ptr(), kind.encode(), none)
        if rtos == ffi.NULL and not none[0]:
            _raise(f"{kind}: no such RTOS layer")
        if rtos == ffi.NULL:  # no RTOS at all: threads are TCB addresses
            self.warnings.append(f"{_text(lib.spoor_last_error())}; threads are shown by TCB "
                                 "address only")
        else:
            self._rtos = rtos
        if not (mem or dump is not None or gdb or telnet):
            return
        keep = self._keep
        if isinstance(dump, (bytes, bytearray, memoryview)):
            dump = _image_file(dump, 0, keep)
        src = _snapshot_source(keep, dump=dump, gdb=gdb, mem=mem)
        openocd = ffi.NULL
        if telnet is not None:
            keep.append(ffi.new("char[]", telnet.encode()))
            openocd = keep[-1]
        target = lib.spoor_py_top_memory(src, openocd, elf._ptr())
        if target == ffi.NULL:
            _raise()
        self._target = target

    def _collect_notices(self) -> None:
        t = self._t
        raw = ffi.unpack(t.notices, t.notices_len) if t.notices_len else b""
        for item in raw.split(b"\0")[:-1]:
            kind, _, text = item.decode("utf-8", "replace").partition(":")
            message = self._notice(int(kind), text)
            if message:
                self.warnings.append(message)

    def _notice(self, kind: int, text: str) -> Optional[str]:
        """A notice of the session in spoor top's words (its lines on stderr)."""
        if kind == lib.SPOOR_TOP_NOTICE_HOST_CLOCK:
            return ("no local timestamp in the stream yet (ITM_TCR.TSENA 0?): packets are timed "
                    "by the host's clock at reception, not the target's, until one comes")
        if kind == lib.SPOOR_TOP_NOTICE_MATCH_WITHOUT_VALUE:
            return (f"comparator {self.comparator} sends data trace match packets, which carry "
                    "no value: it watches the address without the value (ARMv8-M DWT_FUNCTION "
                    "MATCH 0b0101); thread switches need MATCH 0b1101, as --setup v8m and "
                    "spoor_itm_watch_current_thread() write")
        if kind == lib.SPOOR_TOP_NOTICE_IDLE_UNKNOWN:
            return f"{text}: the idle thread's time counts as busy"
        if kind == lib.SPOOR_TOP_NOTICE_TARGET_READ:
            return text
        return None

    def _check_lost(self) -> None:
        lost = lib.spoor_top_session_lost(self._t.session)
        if lost != ffi.NULL:
            raise Error(_text(lost) or "the target's connection was lost")

    def _take(self, ok: bool) -> List[Dict[str, Any]]:
        """The intervals reported since the last take, as dicts."""
        t = self._t
        text = ffi.unpack(t.json, t.json_len).decode("utf-8", "replace") if t.json_len else ""
        self._collect_notices()
        lib.spoor_py_top_clear(t)
        if not ok:
            _raise("out of memory")
        self._check_lost()
        return [json.loads(line) for line in text.splitlines()]

    def _live(self) -> Any:
        if self._t is None:
            raise Error("the session is closed")
        if self._finished:
            raise Error("the session has finished: the stream ended")
        return self._t

    def feed(self, data: Bytes) -> List[Dict[str, Any]]:
        """Takes the next bytes of the stream; returns the intervals they completed (an
        interval ends when a packet dated after it comes), in order. After intervals=N
        intervals the rest of the stream is ignored."""
        t = self._live()
        buf = ffi.from_buffer(data)
        return self._take(lib.spoor_py_top_feed(t, buf, len(buf)))

    def idle(self) -> List[Dict[str, Any]]:
        """The source has been quiet for a while (spoor top calls this after 100 ms without a
        byte): the decoder releases the packets it holds for a timestamp that has not come, and
        on a live stream timed by the host's clock the intervals that have passed end. Returns
        the intervals that completed."""
        return self._take(lib.spoor_py_top_idle(self._live()))

    def finish(self) -> List[Dict[str, Any]]:
        """The end of the stream: the last interval (cut short, "partial") and the summary of
        the whole run ("summary"), unless intervals=N stopped the session first. An empty
        stream (no byte) raises Error, as spoor top exits with an error."""
        t = self._live()
        self._finished = True
        out = self._take(lib.spoor_py_top_finish(t))
        status = ffi.new("spoor_top_session_status *")
        lib.spoor_top_session_status_get(t.session, status)
        if not status.intervals_done and not lib.spoor_trace_pump_bytes(t.pump):
            raise Error("the stream is empty (no byte)")
        return out

    def close(self) -> None:
        """Releases the session, its RTOS layer and target memory (and the ELF it opened)."""
        if self._t is not None:
            lib.spoor_py_top_free(self._t)
            self._t = None
        if self._rtos is not None:
            lib.spoor_rtos_close(self._rtos)
            self._rtos = None
        if self._target is not None:
            lib.spoor_snapshot_close(self._target)
            self._target = None
        if self._own_elf is not None:
            self._own_elf.close()
            self._own_elf = None
        for kept in self._keep:
            if isinstance(kept, tempfile.TemporaryDirectory):
                kept.cleanup()
        self._keep = []

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_keep", None) is not None:
            self.close()


def _chunks(data: Union[Bytes, BinaryIO, PathLike]) -> Iterator[Bytes]:
    """The bytes of a stream given as bytes, a binary file object or a path, in chunks."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        yield data
        return
    if not hasattr(data, "read"):
        with open(os.fspath(data), "rb") as f:  # type: ignore[arg-type]
            yield from _chunks(f)
        return
    while True:
        chunk = data.read(_CHUNK)  # type: ignore[union-attr]
        if not chunk:
            return
        yield chunk


def run(elf: Union[Elf, PathLike], data: Union[Bytes, BinaryIO, PathLike],
        **options: Any) -> List[Dict[str, Any]]:
    """Every interval of a recorded stream (its bytes, a binary file object or a path), then
    the summary: the lines `spoor top --json FILE --input STREAM` writes, as dicts. options:
    Session's keywords (cpu_freq is required)."""
    with Session(elf, **options) as session:
        out: List[Dict[str, Any]] = []
        for chunk in _chunks(data):
            out += session.feed(chunk)
        return out + session.finish()

"""spoor for Python: Cortex-M firmware symbols, crash reports and fleet triage, computed by libspoor
in this process (no program is run).

    import spoor
    elf = spoor.Elf("fw.elf")
    elf.symbolize(0x08000123)          # the object `spoor sym --json` prints
    report = spoor.crash(elf, dump="crash.bin")   # the document of `spoor crash --json`
    buckets = spoor.triage(["dumps/"], elf_dir="elfs/")   # the lines of `spoor triage --json`
    page = spoor.report_html(elf, dump="crash.bin")        # the page `spoor report` writes

Every failure raises spoor.Error with libspoor's message.
"""
from __future__ import annotations

import json
import os
import tempfile
from typing import (Any, Callable, Dict, Iterable, List, Mapping, NoReturn, Optional, Sequence,
                    Tuple, TypeVar, Union)

from . import itm
from ._spoor import ffi, lib

__all__ = ["Error", "Elf", "crash", "report_html", "triage", "triage_merge", "itm", "top"]

PathLike = Union[str, "os.PathLike[str]"]
T = TypeVar("T")

_MAX_FRAMES = 64  # inline frames of one answer, as spoor sym gives them


class Error(Exception):
    """A libspoor call failed; the message is libspoor's (spoor_last_error)."""


def _raise(what: Optional[str] = None) -> NoReturn:
    """Raises Error with spoor_last_error()'s message (what when libspoor set none)."""
    message = ffi.string(lib.spoor_last_error()).decode("utf-8", "replace")
    raise Error(message or what or "libspoor failed")


def _text(p: Any) -> Optional[str]:
    return None if p == ffi.NULL else ffi.string(p).decode("utf-8", "replace")


def _path(p: PathLike) -> bytes:
    return os.fsencode(os.fspath(p))


def _take_text(p: Any, length: Any) -> str:
    """The malloc'd text libspoor returned, as a str; freed here."""
    try:
        return ffi.unpack(p, length[0]).decode("utf-8", "replace")
    finally:
        lib.free(p)


class Elf:
    """A firmware ELF opened by libspoor (spoor_elf_open). Use as a context manager, or call
    close(); it is also closed when collected."""

    def __init__(self, path: PathLike) -> None:
        self.path = os.fspath(path)
        handle = lib.spoor_elf_open(_path(path))
        if handle == ffi.NULL:
            _raise(self.path)
        self._handle: Any = ffi.gc(handle, lib.spoor_elf_close)

    def close(self) -> None:
        """Releases the ELF now (it cannot be used afterwards)."""
        if self._handle is not None:
            ffi.release(self._handle)
            self._handle = None

    def __enter__(self) -> "Elf":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _ptr(self) -> Any:
        if self._handle is None:
            raise Error(f"{self.path}: the ELF is closed")
        return self._handle

    def warnings(self) -> List[str]:
        """The parts of the ELF that could not be read so far, one line each."""
        lst = ffi.new("const char *const **")
        n = lib.spoor_elf_warnings(self._ptr(), lst)
        return [_text(lst[0][i]) or "" for i in range(n)]

    def symbolize(self, addr: int, return_address: bool = False) -> Dict[str, Any]:
        """The function, offset, file, line and inline chain of an address: the object
        `spoor sym --json [-r] ADDR` prints ("addr" as "0x%08x", "inlined" outermost last,
        "partial": True when a part of the ELF the answer needs could not be read).
        return_address: the address is a return address (a backtrace's caller)."""
        if not 0 <= addr <= 0xFFFFFFFF:
            raise Error(f"{addr:#x}: not a 32-bit address")
        elf = self._ptr()
        frames = ffi.new("spoor_location[]", _MAX_FRAMES)
        if return_address:
            n = lib.spoor_elf_symbolize_pc(elf, addr & ~1, True, frames, _MAX_FRAMES)
            if n and frames[0].has_offset:
                frames[0].offset = lib.spoor_elf_function_offset(elf, addr & ~1, True, frames)
        else:
            n = lib.spoor_elf_symbolize(elf, addr, frames, _MAX_FRAMES)
        f0 = frames[0]
        out: Dict[str, Any] = {
            "addr": f"0x{addr:08x}",
            "function": _text(f0.function),
            "offset": f0.offset if f0.has_offset else None,
            "file": _text(f0.file),
            "line": f0.line if (f0.file != ffi.NULL or f0.line) else None,
            "inlined": [
                {
                    "function": _text(frames[i].function),
                    "file": _text(frames[i].file),
                    "line": frames[i].line
                    if (frames[i].file != ffi.NULL or frames[i].line) else None,
                }
                for i in range(1, n)
            ],
        }
        if lib.spoor_elf_warnings(elf, ffi.NULL) and lib.spoor_elf_partial(
                elf, lib.spoor_lookup_pc(addr, return_address)):
            out["partial"] = True
        return out

    def symbolize_many(self, addrs: Iterable[int],
                       return_address: bool = False) -> List[Dict[str, Any]]:
        """symbolize() of every address, in order: the lines of `spoor sym --json ADDR...`."""
        return [self.symbolize(a, return_address) for a in addrs]


def _image_file(data: Union[bytes, bytearray, memoryview], addr: int, keep: List[Any]) -> str:
    """A memory image given as bytes, in a private temporary file (libspoor maps images from
    files); removed with keep."""
    folder = tempfile.TemporaryDirectory(prefix="spoor-mem-")
    keep.append(folder)
    path = os.path.join(folder.name, f"0x{addr:08x}.bin")
    with open(path, "wb") as f:
        f.write(data)
    return path


def _source_images(src: Any, mem: Optional[Mapping[int, Union[PathLike, bytes]]],
                   keep: List[Any]) -> None:
    """The memory images of a snapshot source (src.mems), as --mem ADDR:FILE gives them."""
    items = list((mem or {}).items())
    mems = ffi.new("spoor_raw_memory[]", max(1, len(items)))
    keep.append(mems)
    for i, (addr, image) in enumerate(items):
        if isinstance(image, (bytes, bytearray, memoryview)):
            image = _image_file(image, addr, keep)
        keep.append(ffi.new("char[]", _path(image)))
        mems[i].address = addr
        mems[i].path = keep[-1]
    src.mems = mems
    src.nmems = len(items)


def _snapshot_source(keep: List[Any], dump: Optional[PathLike] = None,
                     regs: Optional[PathLike] = None, gdb: Optional[str] = None,
                     mem: Optional[Mapping[int, Union[PathLike, bytes]]] = None) -> Any:
    """A spoor_snapshot_source of the inputs given (as --regs, --mem, --gdb and a DUMP path
    give them); its strings and images live as long as keep."""
    src = ffi.new("spoor_snapshot_source *")
    for field, text in (("dump_path", None if dump is None else _path(dump)),
                        ("regs_path", None if regs is None else _path(regs)),
                        ("gdb", None if gdb is None else gdb.encode())):
        if text is not None:
            keep.append(ffi.new("char[]", text))
            setattr(src, field, keep[-1])
    _source_images(src, mem, keep)
    return src


def _snapshot(elf: Elf, dump: Union[PathLike, bytes, None], regs: Optional[PathLike],
              mem: Optional[Mapping[int, Union[PathLike, bytes]]], gdb: Optional[str],
              keep: List[Any]) -> Any:
    """Opens the snapshot of the inputs (spoor_snapshot_open / spoor_snapshot_from_dump)."""
    if (dump is not None) + (regs is not None) + (gdb is not None) != 1 or (dump is not None
                                                                           and mem):
        raise Error("give either a dump, regs (with mem), or gdb (mem may be added)")
    if isinstance(dump, (bytes, bytearray, memoryview)):
        parsed = lib.spoor_dump_parse(ffi.from_buffer(dump), len(dump))
        if parsed == ffi.NULL:
            _raise("dump")
        name = ffi.new("char[]", b"dump")
        keep.append(name)
        snap = lib.spoor_snapshot_from_dump(parsed, name, elf._ptr())
        if snap == ffi.NULL:
            _raise("dump")
        return snap
    src = _snapshot_source(keep, dump=dump, regs=regs, gdb=gdb, mem=mem)
    snap = lib.spoor_snapshot_open(src, elf._ptr())
    if snap == ffi.NULL:
        _raise()
    return snap


Mem = Optional[Mapping[int, Union[PathLike, bytes]]]


def crash(elf: Union[Elf, PathLike], dump: Union[PathLike, bytes, None] = None,
          regs: Optional[PathLike] = None,
          mem: Optional[Mapping[int, Union[PathLike, bytes]]] = None,
          gdb: Optional[str] = None, threads: bool = False) -> Dict[str, Any]:
    """The crash report of a dump (a path or its bytes), or of a registers file (regs.json) with
    memory images (mem: {address: path or bytes}), or of a halted live target behind a GDB
    server (gdb: "HOST:PORT"), with its ELF (an Elf or a path): the document
    `spoor crash --json [--threads]` prints, as a dict (docs/crash.md's schema)."""
    return _with_report(elf, dump, regs, mem, gdb, threads, _crash_json)


def report_html(elf: Union[Elf, PathLike], dump: Union[PathLike, bytes, None] = None,
                regs: Optional[PathLike] = None, mem: Mem = None, gdb: Optional[str] = None,
                threads: bool = False) -> str:
    """The page `spoor report -o PAGE.html [--threads]` writes of the same inputs as crash()'s:
    one self-contained HTML document (the fault, registers, backtrace with source text and
    disassembly, threads; rendered by its own script, nothing fetched), as a str."""
    name = _input_name(dump, regs, mem, gdb)
    return _with_report(elf, dump, regs, mem, gdb, threads,
                        lambda report: _report_page(report, name))


def _crash_and_page(elf: Union[Elf, PathLike], dump: Union[PathLike, bytes, None] = None,
                    regs: Optional[PathLike] = None, mem: Mem = None,
                    gdb: Optional[str] = None,
                    threads: bool = False) -> Tuple[Dict[str, Any], Union[str, Error]]:
    """crash()'s dict and report_html()'s page of one reading of the inputs (a live target is
    read once, not twice); the page is the Error that stopped it when only the page failed."""
    name = _input_name(dump, regs, mem, gdb)

    def both(report: Any) -> Tuple[Dict[str, Any], Union[str, Error]]:
        document = _crash_json(report)
        try:
            return document, _report_page(report, name)
        except Error as e:
            return document, e

    return _with_report(elf, dump, regs, mem, gdb, threads, both)


def _input_name(dump: Union[PathLike, bytes, None], regs: Optional[PathLike], mem: Mem,
                gdb: Optional[str]) -> bytes:
    """The input as spoor report's page names it."""
    if isinstance(dump, (bytes, bytearray, memoryview)):
        name = "dump"  # as crash() names a dump given as bytes
    elif dump is not None:
        name = os.fspath(dump)
    elif gdb is not None:
        name = f"--gdb {gdb}"
    else:  # as spoor report names its input
        name = f"--regs {os.fspath(regs) if regs is not None else '-'}" + (" --mem ..." if mem
                                                                           else "")
    return os.fsencode(name)


def _with_report(elf: Union[Elf, PathLike], dump: Union[PathLike, bytes, None],
                 regs: Optional[PathLike], mem: Mem, gdb: Optional[str], threads: bool,
                 use: Callable[[Any], T]) -> T:
    """use(report) of the crash report of crash()'s inputs (spoor_crash_open), released after."""
    if not isinstance(elf, Elf):
        elf = Elf(elf)
    keep: List[Any] = []
    try:
        snap = _snapshot(elf, dump, regs, mem, gdb, keep)
        try:
            options = ffi.new("spoor_crash_options *")
            lib.spoor_py_crash_options_default(options)
            options.threads = bool(threads)
            report = lib.spoor_crash_open(elf._ptr(), snap, options)
            if report == ffi.NULL:
                _raise()
            try:
                return use(report)
            finally:
                lib.spoor_crash_close(report)
        finally:
            lib.spoor_snapshot_close(snap)
    finally:
        for kept in keep:
            if isinstance(kept, tempfile.TemporaryDirectory):
                kept.cleanup()


def _crash_json(report: Any) -> Dict[str, Any]:
    length = ffi.new("size_t *")
    text = lib.spoor_crash_json(report, length)
    if text == ffi.NULL:
        _raise()
    return json.loads(_take_text(text, length))


def _report_page(report: Any, input_name: bytes) -> str:
    options = ffi.new("spoor_report_options *")
    name = ffi.new("char[]", input_name)
    options.input = name
    length = ffi.new("size_t *")
    page = lib.spoor_crash_html(report, options, length)
    if page == ffi.NULL:
        _raise()
    return _take_text(page, length)


def _triage_lines(t: Any, per_dump: bool) -> List[Dict[str, Any]]:
    length = ffi.new("size_t *")
    text = lib.spoor_triage_json(t, per_dump, length)
    if text == ffi.NULL:
        _raise()
    return [json.loads(line) for line in _take_text(text, length).splitlines() if line]


def triage(paths: Sequence[PathLike], elf_dir: PathLike, k: int = 5, jobs: int = 0,
           per_dump: bool = False) -> List[Dict[str, Any]]:
    """Signs every dump at paths (files, or folders read recursively) with its ELF found by
    build-id in elf_dir, and groups them into buckets: the objects `spoor triage --json` prints,
    one per line (the shard line, the buckets, the dumps that could not be signed; per_dump:
    a line per dump, as --per-dump: a shard triage_merge takes). k: application frames per
    signature; jobs: threads (0: one per CPU)."""
    directory = lib.spoor_elf_dir_scan(_path(elf_dir))
    if directory == ffi.NULL:
        _raise(os.fspath(elf_dir))
    t = lib.spoor_triage_new(directory, k)
    listed = ffi.new("char ***")
    count = ffi.new("size_t *")
    try:
        if t == ffi.NULL:
            _raise()
        _list_files(t, paths, listed, count)
        if not lib.spoor_triage_add_files(t, listed[0], count[0], jobs):
            _raise()
        return _triage_lines(t, per_dump)
    finally:
        _free_listed(listed, count)
        if t != ffi.NULL:
            lib.spoor_triage_free(t)
        lib.spoor_elf_dir_free(directory)


def _list_files(t: Any, paths: Union[PathLike, Sequence[PathLike]], listed: Any,
                count: Any) -> None:
    """Every file at paths (one path or several; folders read recursively, sorted), appended
    to the C array *listed of *count paths (spoor_triage_list_files; _free_listed frees it)."""
    if isinstance(paths, (str, bytes)) or hasattr(paths, "__fspath__"):
        paths = [paths]  # type: ignore[list-item]
    for p in paths:  # type: ignore[union-attr]
        if not lib.spoor_triage_list_files(t, _path(p), listed, count):
            _raise()


def _free_listed(listed: Any, count: Any) -> None:
    if listed[0] != ffi.NULL:
        for i in range(count[0]):
            lib.free(listed[0][i])
        lib.free(listed[0])
        listed[0] = ffi.NULL


Shard = Union[PathLike, bytes, Sequence[Mapping[str, Any]]]


def triage_merge(shards: Sequence[Shard], per_dump: bool = False) -> List[Dict[str, Any]]:
    """Merges shards of a fleet's triage, signed apart (on other machines, by other jobs): the
    objects `spoor triage --merge --json [--per-dump] FILE...` prints. Each shard is what
    triage(..., per_dump=True) returned (a list of objects), the JSON Lines text of
    `spoor triage --json --per-dump` as bytes, or the path of such a file. Merging is
    associative and commutative: merged shards give what one triage of all the dumps gives."""
    t = lib.spoor_triage_new(ffi.NULL, 0)
    if t == ffi.NULL:
        _raise()
    try:
        for i, shard in enumerate(shards):
            _merge_shard(t, shard, f"shard {i + 1}")
        return _triage_lines(t, per_dump)
    finally:
        lib.spoor_triage_free(t)


def _merge_shard(t: Any, shard: Shard, name: str) -> None:
    """Adds one shard (as triage_merge takes it; name: its name in errors unless a path) to the
    triage t (spoor_triage_merge_text)."""
    if isinstance(shard, (bytes, bytearray)):
        text = bytes(shard)
    elif isinstance(shard, (str, os.PathLike)):
        with open(os.fspath(shard), "rb") as f:
            text, name = f.read(), os.fspath(shard)
    else:
        text = "".join(json.dumps(o, separators=(",", ":")) + "\n" for o in shard).encode()
    if not lib.spoor_triage_merge_text(t, text, len(text), name.encode()):
        _raise(name)


from . import top  # noqa: E402  (spoor.top uses Elf and Error, defined above)

"""Fleet triage on a Dask cluster: the dumps are split into shards, each shard is signed on a
worker (spoor.triage(shard, elf_dir), what `spoor triage --json [--per-dump]` prints for it)
and the shards are merged on the client with libspoor's merge (spoor.triage_merge, as
`spoor triage --merge`), so the result is what one triage of all the dumps gives.

    from distributed import Client
    import spoor.dask
    client = Client("tcp://scheduler:8786")
    lines = spoor.dask.triage(["/srv/dumps"], "/srv/elfs", client=client)

The dump paths and elf_dir must name the same files on every worker (a shared file system
mounted at the same place); the folders are listed on the client. Workers need this package
importable (on their PYTHONPATH) with a libspoor they can load.

This module needs dask.distributed (Debian: python3-distributed); `import spoor` does not.
"""
from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Union

from . import Error, PathLike, _free_listed, _list_files, _merge_shard, _triage_lines
from . import triage as _triage
from ._spoor import ffi, lib

if TYPE_CHECKING:  # pragma: no cover
    from distributed import Client

__all__ = ["triage", "shards", "DEFAULT_SHARD_SIZE"]

DEFAULT_SHARD_SIZE = 500
"""Dumps per shard unless told. A task costs a few milliseconds besides its dumps (bench/
triage_dask.py, a release build on a loaded 2-core machine: ~7 ms of a worker's time per task,
0.06 to 0.15 ms per dump of the example firmware), about a tenth of a shard of 500; a fleet of a
few thousand dumps still gives each worker of a small cluster a task or more."""


def shards(paths: Union[PathLike, Sequence[PathLike]],
           shard_size: int = DEFAULT_SHARD_SIZE) -> List[List[str]]:
    """The dump files at paths (files, or folders read recursively: the files spoor.triage and
    `spoor triage` take, in their order), listed here and cut into consecutive shards of at most
    shard_size files whose sizes differ by one at most. Each shard is one task of
    triage(); run by hand, each is `spoor triage --json --per-dump SHARD...` on some machine
    and `spoor triage --merge` joins their outputs."""
    if shard_size < 1:
        raise Error(f"shard_size {shard_size}: must be at least 1")
    t = lib.spoor_triage_new(ffi.NULL, 0)
    if t == ffi.NULL:
        raise Error("out of memory")
    listed = ffi.new("char ***")
    count = ffi.new("size_t *")
    try:
        _list_files(t, paths, listed, count)
        files = [os.fsdecode(ffi.string(listed[0][i])) for i in range(count[0])]
    finally:
        _free_listed(listed, count)
        lib.spoor_triage_free(t)
    n = max(1, math.ceil(len(files) / shard_size))
    size, extra = divmod(len(files), n)
    cuts = [i * size + min(i, extra) for i in range(n + 1)]
    return [files[cuts[i]:cuts[i + 1]] for i in range(n)]


def _relative(paths: Sequence[str]) -> bool:
    return any(not os.path.isabs(p) for p in paths)


def _sign_shard(files: List[str], elf_dir: str, k: int, jobs: int, per_dump: bool,
                cwd: Optional[str]) -> List[Dict[str, Any]]:
    """One task, on a worker: spoor.triage of a shard (per_dump: with its per-dump lines, which
    the merge needs only to print them). cwd: the client's working directory when a path is
    relative (the worker must be in the same one)."""
    where = ""
    try:
        from distributed import get_worker
        where = get_worker().address + ": "
    except (ImportError, ValueError):
        pass
    if cwd is not None and os.getcwd() != cwd:
        raise Error(f"{where}relative paths, and the worker's working directory {os.getcwd()} "
                    f"is not the client's {cwd}: give absolute paths")
    try:
        return _triage(files, elf_dir, k=k, jobs=jobs, per_dump=per_dump)
    except Error as e:
        raise Error(f"{where}{e}") from None


def triage(paths: Union[PathLike, Sequence[PathLike]], elf_dir: PathLike,
           client: Optional["Client"] = None, k: int = 5, per_dump: bool = False,
           shard_size: int = DEFAULT_SHARD_SIZE, jobs: int = 1) -> List[Dict[str, Any]]:
    """spoor.triage(paths, elf_dir, k, per_dump=per_dump) computed on a dask.distributed
    cluster: the files at paths (listed here) cut into shards of at most shard_size dumps
    (shards()), each signed by a task on a worker with jobs threads, and the shards merged here
    with libspoor's merge as their results arrive (no shard is kept once merged).

    Returns the objects `spoor triage --json` prints: the buckets and the dumps not signed are
    the lines of one triage of all the dumps; the first line, the shard line, names the shards
    (as `spoor triage --merge --json` of the shards' `--json --per-dump` outputs gives it).

    client: a distributed.Client; None uses the current one (distributed.get_client()). The
    paths and elf_dir must name the same files on every worker (a relative path also needs the
    workers in the client's working directory). A task's failure raises spoor.Error with the
    worker's address and message (e.g. elf_dir not readable there)."""
    try:
        import distributed
    except ImportError as e:
        raise Error(f"spoor.dask needs dask.distributed (python3-distributed): {e}") from None
    if client is None:
        try:
            client = distributed.get_client()
        except ValueError as e:
            raise Error(f"no Dask client: give client= or start a distributed.Client ({e})"
                        ) from None
    work = shards(paths, shard_size)
    elf_path = os.fspath(elf_dir)
    relative = _relative([elf_path]) or any(_relative(s) for s in work)
    cwd = os.getcwd() if relative else None
    futures = client.map(_sign_shard, work, elf_dir=elf_path, k=k, jobs=jobs,
                         per_dump=per_dump, cwd=cwd, pure=False)
    waiting = {f.key: f for f in futures}
    del futures
    merged = lib.spoor_triage_new(ffi.NULL, 0)
    try:
        if merged == ffi.NULL:
            raise Error("out of memory")
        done = distributed.as_completed(list(waiting.values()), loop=client.loop,
                                        with_results=True)
        for i, (future, result) in enumerate(_results(done)):
            _merge_shard(merged, result, f"shard {i + 1}")
            del waiting[future.key]  # its result is released on the worker
            future.release()
        return _triage_lines(merged, per_dump)
    finally:
        if waiting:  # a task failed: the others are not wanted
            client.cancel(list(waiting.values()))
        if merged != ffi.NULL:
            lib.spoor_triage_free(merged)


def _results(done: Any) -> Any:
    """(future, result) of each task as it finishes; a task's error as spoor.Error."""
    while True:
        try:
            yield next(done)
        except StopIteration:
            return
        except Error:
            raise
        except Exception as e:
            raise Error(f"dask task: {type(e).__name__}: {e}") from e

#!/usr/bin/python3
"""spoor.dask.triage throughput on a distributed.LocalCluster of 2 worker processes (one thread
each), against the baseline of `spoor triage --json` (the CLI, one thread per core) over the
same dumps, measured in the same run: best of three wall-clock times of each, dumps/s and the
ratio. The dumps: tests/python/test_dask.py's fleet (make_fleet: the crash example's M3, the M3
built again with its code moved, and the M0, each scenario run once in QEMU and copied; one
truncated dump). The cluster's start is timed apart (once per session, not per triage).

usage: bench/triage_dask.py [BUILD_DIR] [N] [SHARD_SIZE]
  BUILD_DIR: the build whose spoor and libspoor are measured (default build/bench if built,
  else build/check); the Python package of this source tree is built against it into
  BUILD_DIR/python-site-bench first (tests/python/run.py --build). N: dumps (default 2000).
  SHARD_SIZE: spoor.dask's default.
Runs under Debian's /usr/bin/python3 (python3-distributed); with an ASan build it restarts
itself with the sanitizer runtimes preloaded, as the tests run."""
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEBIAN_PYTHON = "/usr/bin/python3"


def build_dir():
    if len(sys.argv) > 1:
        return Path(sys.argv[1]).resolve()
    bench = ROOT / "build" / "bench"
    return bench if (bench / "spoor").is_file() else ROOT / "build" / "check"


BUILD = build_dir()
N = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
SITE = BUILD / "python-site-bench"
os.environ.update(SPOOR_BUILD_DIR=str(BUILD), SPOOR_SOURCE_DIR=str(ROOT),
                  SPOOR_FIRMWARE_DIR=str(BUILD / "firmware"), SPOOR_BIN=str(BUILD / "spoor"),
                  SPOOR_PYTHON_SITE=str(SITE))
sys.path[:0] = [str(SITE), str(ROOT / "tests" / "python"), str(ROOT / "tests" / "e2e")]
import run  # noqa: E402  (tests/python/run.py: the package's build and its sanitizer preload)


def restart_preloaded():
    """An ASan libspoor loads only into a process started with its runtimes preloaded."""
    env = run.sanitizer_env()
    if env and "LD_PRELOAD" not in os.environ:
        os.environ.update(env, PYTHONPATH=os.pathsep.join(sys.path[:3]))
        os.execv(DEBIAN_PYTHON, [DEBIAN_PYTHON, *sys.argv])


def best(fn, times=3):
    """(best wall-clock seconds, the last result) of fn()."""
    seconds, result = None, None
    for _ in range(times):
        t0 = time.perf_counter()
        result = fn()
        dt = time.perf_counter() - t0
        seconds = dt if seconds is None or dt < seconds else seconds
    return seconds, result


def main():
    if sys.executable != DEBIAN_PYTHON:
        os.execv(DEBIAN_PYTHON, [DEBIAN_PYTHON, *sys.argv])
    if "SPOOR_BENCH_BUILT" not in os.environ:
        subprocess.run([DEBIAN_PYTHON, str(ROOT / "tests" / "python" / "run.py"), "--build"],
                       check=True)
        os.environ["SPOOR_BENCH_BUILT"] = "1"
        os.execv(DEBIAN_PYTHON, [DEBIAN_PYTHON, *sys.argv])  # with the new folder on sys.path
    restart_preloaded()
    import dask
    import distributed

    import spoor.dask
    import support  # takes the preload away from the programs started from here on
    from test_dask import make_fleet

    shard_size = int(sys.argv[3]) if len(sys.argv) > 3 else spoor.dask.DEFAULT_SHARD_SIZE
    with tempfile.TemporaryDirectory(prefix="spoor-bench-dask-") as tmp:
        elfs, dumps, _ = make_fleet(Path(tmp), N)
        spoor_bin = os.environ["SPOOR_BIN"]
        print(f"build: {BUILD}")
        print(f"{N} dumps of 3 builds; load average before: {os.getloadavg()[0]:.1f} "
              f"on {os.cpu_count()} cores")

        def cli():
            return subprocess.run([spoor_bin, "triage", "--elf-dir", str(elfs), "--json",
                                   str(dumps)], capture_output=True, text=True,
                                  check=True).stdout

        t_cli, out = best(cli)
        want = [json.loads(line) for line in out.splitlines()]
        env = dict(support.PRELOAD, PYTHONPATH=os.environ.get("PYTHONPATH", ""))
        saved = dict(os.environ)
        t0 = time.perf_counter()
        spawn_env = dict(dask.config.get("distributed.nanny.pre-spawn-environ"), **env)
        with dask.config.set({"distributed.nanny.pre-spawn-environ": spawn_env}):
            cluster = distributed.LocalCluster(n_workers=2, processes=True,
                                               threads_per_worker=1, dashboard_address=None)
        os.environ.clear()
        os.environ.update(saved)
        with cluster, distributed.Client(cluster) as client:
            t_start = time.perf_counter() - t0
            t_dask, got = best(lambda: spoor.dask.triage([dumps], elfs, client=client,
                                                         shard_size=shard_size))
        if got[1:] != want[1:]:
            sys.exit("spoor.dask.triage and spoor triage --json give other buckets")
        shards = len(got[0]["shards"])
        print(f"spoor triage --json (baseline, {os.cpu_count()} threads): "
              f"{N / t_cli:8.0f} dumps/s ({t_cli:.3f} s)")
        print(f"spoor.dask.triage, LocalCluster 2 workers x 1 thread, {shards} shards of "
              f"<= {shard_size}: {N / t_dask:8.0f} dumps/s ({t_dask:.3f} s; "
              f"cluster start {t_start:.1f} s, not counted)")
        print(f"ratio (spoor.dask.triage / spoor triage --json): {t_cli / t_dask:.2f}x")
        print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()

"""spoor.dask.triage on a distributed.LocalCluster of 2 worker processes over 2,000 dumps of three
firmware builds: the crash example on the M3 (build A), the M3 built again with its code moved
(build B, tests/e2e/test_triage.py's build_b) and the M0, a truncated dump among them, file
times shuffled. Checked against the same build's CLI:

- the lines after the shard line are those of `spoor triage --json` (and of spoor.triage) over
  all the dumps, with the default k and with -k and --per-dump;
- the whole output, shard line included, is `spoor triage --merge --json [--per-dump]` of the
  CLI's `--json --per-dump` outputs of the same shards (spoor.dask.shards);
- each bucket holds the dumps of one scenario (known from how each dump was made), all of them;
- the truncated dump is a line with its error, as the CLI gives it;
- errors: no client, an elf_dir the workers cannot read (spoor.triage's message, with the
  worker's address), relative paths from another working directory;
- `import spoor` loads no Dask, and spoor.dask says when dask.distributed is missing;
- docs/triage.md's ```python blocks (a LocalCluster with the preload, the recipe) run.

The workers are processes of their own: they get the sanitizer runtimes of an ASan build
(support.PRELOAD) and the package's path (PYTHONPATH) before their interpreter starts, through
distributed's nanny.pre-spawn-environ."""
import concurrent.futures
import importlib.util
import json
import os
import random
import re
import shutil
import sys

import dask
import distributed
import pytest

import harness
import spoor
import spoor.dask
from support import DEBIAN_PYTHON, PRELOAD, SOURCE, cli, run

COUNT = 2000
# (core, build) -> scenarios run in QEMU; each dump is copied until there are COUNT in all
SCENARIOS = {("m3", "a"): ["div0", "assert", "busfault"],
             ("m3", "b"): ["div0", "assert", "busfault"],
             ("m0", "a"): ["assert", "undef"]}


def e2e_triage():
    """tests/e2e/test_triage.py (its build B and QEMU runs), which this folder's test_triage.py
    hides from import by name."""
    spec = importlib.util.spec_from_file_location(
        "e2e_test_triage", SOURCE / "tests" / "e2e" / "test_triage.py")
    module = importlib.util.module_from_spec(spec)
    path = list(sys.path)
    spec.loader.exec_module(module)
    sys.path[:] = path  # it puts its folder first
    return module


def make_fleet(root, count=COUNT):
    """(elf folder, dump folder, {dump path: scenario}) under root: count dumps, the last of them
    truncated (dumps/m3-a/cut.bin), the others copies of one QEMU run per scenario and build
    (bench/triage_dask.py makes its fleet here too)."""
    e2e = e2e_triage()
    build_b, run_qemu = e2e.build_b, e2e.run_qemu
    elfs, dumps, made = root / "elfs", root / "dumps", root / "made"
    for folder in (elfs, dumps, made):
        folder.mkdir()
    runs = []
    for (core, build), scenarios in SCENARIOS.items():
        elf, machine = harness.example("crash", core)
        if build == "b":
            elf = build_b(core, root)
        shutil.copy(elf, elfs / f"crash-{core}-{build}.elf")
        (dumps / f"{core}-{build}").mkdir()
        runs += [(elf, machine, s, made / f"{core}-{build}-{s}.bin", f"{core}-{build}")
                 for s in scenarios]
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda r: run_qemu(*r[:4]), runs))
    truth = {}
    for i in range(count - 1):
        _, _, scenario, source, folder = runs[i % len(runs)]
        path = dumps / folder / f"{scenario}-{i:04d}.bin"
        shutil.copyfile(source, path)
        truth[str(path)] = scenario
    good = (made / "m3-a-div0.bin").read_bytes()
    cut = dumps / "m3-a" / "cut.bin"
    cut.write_bytes(good[:len(good) // 2])
    times = list(range(count))
    random.Random(36).shuffle(times)  # the earliest dump of a bucket is in any shard
    for t, path in zip(times, sorted(truth) + [str(cut)]):
        os.utime(path, (1700000000 + 60 * t, 1700000000 + 60 * t))
    return elfs, dumps, truth


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    return make_fleet(tmp_path_factory.mktemp("dask-fleet"))


@pytest.fixture(scope="module")
def cluster():
    """A LocalCluster of 2 worker processes, one thread each, whose interpreters start with the
    sanitizer preload and the package on their path."""
    env = dict(PRELOAD, PYTHONPATH=os.environ.get("PYTHONPATH", ""))
    saved = dict(os.environ)  # the nanny sets pre-spawn-environ in this process's environment
    try:
        spawn_env = dict(dask.config.get("distributed.nanny.pre-spawn-environ"), **env)
        with dask.config.set({"distributed.nanny.pre-spawn-environ": spawn_env}):
            local = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                             dashboard_address=None, env=env)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    with local:
        yield local


@pytest.fixture(scope="module")
def client(cluster):
    with distributed.Client(cluster, set_as_default=False) as c:
        yield c


def lines(text):
    return [json.loads(line) for line in text.splitlines()]


@pytest.fixture(scope="module")
def cli_triage(fleet):
    """cli_triage(*flags) -> the lines of `spoor triage --elf-dir ELFS FLAGS --json DUMPS` (run
    once per flags)."""
    elfs, dumps, _ = fleet
    made = {}

    def run(*flags):
        if flags not in made:
            made[flags] = lines(cli("triage", "--elf-dir", elfs, *flags, "--json", dumps).stdout)
        return made[flags]

    return run


def check_buckets(result, truth):
    """Each bucket holds one scenario's dumps, all of them; the truncated dump is not signed."""
    per_dump = {o["dump"]: o for o in result if "dump" in o}
    assert set(per_dump) == set(truth) | {p for p in per_dump if p.endswith("cut.bin")}
    scenario_of = {}
    for path, scenario in truth.items():
        assert scenario_of.setdefault(per_dump[path]["bucket"], scenario) == scenario, path
    assert sorted(scenario_of.values()) == sorted(set(truth.values()))
    counts = {o["bucket"]: o["count"] for o in result if "count" in o}
    assert counts == {b: sum(1 for p, s in truth.items() if s == scenario_of[b])
                      for b in scenario_of}
    [cut] = [o for o in per_dump.values() if o["dump"].endswith("cut.bin")]
    assert "truncated" in cut["error"] and "bucket" not in cut


def test_equals_cli(fleet, client, cli_triage):
    elfs, dumps, truth = fleet
    want = cli_triage()
    got = spoor.dask.triage([dumps], elfs, client=client)
    assert got[1:] == want[1:]
    shards = spoor.dask.shards([dumps])
    assert len(shards) == COUNT // spoor.dask.DEFAULT_SHARD_SIZE
    assert got[0]["spoor_triage"] == 1 and len(got[0]["shards"]) == len(shards)
    assert got[1:] == spoor.triage([dumps], elf_dir=elfs)[1:]
    assert sum(o["count"] for o in got if "count" in o) == COUNT - 1
    assert [o for o in got if "error" in o] == [o for o in want if "error" in o] != []


def test_k_per_dump_equals_cli_merge(fleet, client, cli_triage, tmp_path):
    elfs, dumps, truth = fleet
    got = spoor.dask.triage(dumps, elfs, client=client, k=3, per_dump=True, shard_size=300)
    check_buckets(got, truth)
    whole = cli_triage("-k", "3", "--per-dump")
    assert got[1:] == whole[1:]
    assert got[1:] == spoor.triage(dumps, elf_dir=elfs, k=3, per_dump=True)[1:]
    files = []
    shards = spoor.dask.shards(dumps, shard_size=300)
    assert [len(s) for s in shards] == [286] * 5 + [285] * 2  # 2000 = 5 * 286 + 2 * 285
    for i, shard in enumerate(shards):
        files.append(tmp_path / f"shard{i}.jsonl")
        files[-1].write_text(cli("triage", "--elf-dir", elfs, "-k", "3", "--json", "--per-dump",
                                 *shard).stdout)
    merged = cli("triage", "--merge", "--json", "--per-dump", *files).stdout
    assert got == lines(merged)  # the shard line too: the same shards, signed alike


def test_default_client_and_errors(fleet, cluster, client, tmp_path, monkeypatch):
    elfs, dumps, _ = fleet
    some = dumps / "m0-a"
    with pytest.raises(spoor.Error, match="no Dask client"):
        spoor.dask.triage(some, elfs)
    with distributed.Client(cluster.scheduler_address) as default:
        assert distributed.get_client() is default
        assert spoor.dask.triage(some, elfs, k=2)[1:] == lines(
            cli("triage", "--elf-dir", elfs, "-k", "2", "--json", some).stdout)[1:]
    missing = tmp_path / "no-elfs"
    with pytest.raises(spoor.Error) as local:
        spoor.triage(some, missing)
    with pytest.raises(spoor.Error) as remote:
        spoor.dask.triage(some, missing, client=client)
    assert re.fullmatch(r"tcp://[\d.]+:\d+: " + re.escape(str(local.value)), str(remote.value))
    with pytest.raises(spoor.Error, match="shard_size 0"):
        spoor.dask.triage(some, elfs, client=client, shard_size=0)
    monkeypatch.chdir(dumps.parent)  # the workers stay where they started
    with pytest.raises(spoor.Error, match="relative paths.*give absolute paths"):
        spoor.dask.triage(["dumps/m0-a"], elfs, client=client)


def test_import_without_dask():
    """`import spoor` loads no Dask; without dask.distributed, spoor.dask.triage says so."""
    code = """import sys
import spoor
assert not {"dask", "distributed"} & set(sys.modules), sys.modules.keys()
sys.modules["distributed"] = None  # as if it were not installed
import spoor.dask
try:
    spoor.dask.triage(["dumps"], "elfs")
except spoor.Error as e:
    print(e)
"""
    r = run(DEBIAN_PYTHON, "-c", code, env=dict(os.environ, **PRELOAD))
    assert r.stdout.startswith("spoor.dask needs dask.distributed (python3-distributed): ")


def test_docs_recipe(fleet, cli_triage, capsys):
    """docs/triage.md's ```python blocks: the second starts a LocalCluster with the sanitizer
    preload and a client, the first (the recipe) runs on it, with the fleet's folders."""
    elfs, dumps, _ = fleet
    text = (SOURCE / "docs" / "triage.md").read_text()
    recipe, local = [b.split("```", 1)[0] for b in text.split("```python\n")[1:3]]
    scope = {}
    saved = dict(os.environ)
    try:
        exec(compile(local, "docs/triage.md (LocalCluster)", "exec"), scope)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    with scope["cluster"], scope["client"]:
        names = {"tcp://scheduler:8786": scope["cluster"].scheduler_address,
                 "/srv/dumps": str(dumps), "/srv/elfs": str(elfs)}
        for k, v in names.items():
            assert f'"{k}"' in recipe
            recipe = recipe.replace(f'"{k}"', repr(v))
        exec(compile(recipe, "docs/triage.md", "exec"), scope)
    want = cli_triage()
    assert scope["lines"][1:] == want[1:]
    assert capsys.readouterr().out.startswith(f"{want[1]['count']} {want[1]['signature']}\n")

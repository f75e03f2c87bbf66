"""spoor.triage == the lines of `spoor triage --json` on dumps of several crash scenarios; shards
signed apart and merged (spoor.triage_merge) == `spoor triage --merge` of the CLI's shards ==
one triage of all the dumps."""
import json
import shutil

import pytest

import harness
import spoor
from support import cli


@pytest.fixture(scope="module")
def fleet(crash_dump, tmp_path_factory):
    """(elf folder, dump folder, the four dumps): three scenarios, busfault twice."""
    elf_path, _ = harness.example("crash", "m3")
    root = tmp_path_factory.mktemp("fleet")
    elfs, dumps = root / "elfs", root / "dumps"
    elfs.mkdir()
    dumps.mkdir()
    shutil.copy(elf_path, elfs / "crash-m3.elf")
    made = [crash_dump("busfault"), crash_dump("div0"), crash_dump("badptr"),
            crash_dump("busfault", copy="-again")]
    for path in made:
        shutil.copy(path, dumps / path.name)
    return elfs, dumps, [dumps / p.name for p in made]


def lines(result):
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_triage_equals_cli(fleet):
    elfs, dumps, _ = fleet
    want = lines(cli("triage", "--elf-dir", elfs, "--json", dumps))
    got = spoor.triage([dumps], elf_dir=elfs)
    assert got == want
    buckets = [o for o in got if "count" in o]
    assert sum(b["count"] for b in buckets) == 4
    assert max(b["count"] for b in buckets) == 2  # the two busfault runs
    assert spoor.triage(dumps, elf_dir=elfs, k=2) == lines(
        cli("triage", "--elf-dir", elfs, "-k", "2", "--json", dumps))


def test_triage_shards_merge(fleet, tmp_path):
    elfs, _, made = fleet
    parts = [made[:2], made[2:]]
    files = []
    for i, part in enumerate(parts):
        out = cli("triage", "--elf-dir", elfs, "--json", "--per-dump", *part).stdout
        files.append(tmp_path / f"shard{i}.jsonl")
        files[-1].write_text(out)
        assert spoor.triage(part, elf_dir=elfs, per_dump=True) == [
            json.loads(line) for line in out.splitlines()]
    for per_dump in (False, True):
        flags = ["--per-dump"] if per_dump else []
        want = lines(cli("triage", "--merge", "--json", *flags, *files))
        shards = [spoor.triage(part, elf_dir=elfs, per_dump=True) for part in parts]
        assert spoor.triage_merge(shards, per_dump=per_dump) == want
        assert spoor.triage_merge(files, per_dump=per_dump) == want
        assert spoor.triage_merge([f.read_bytes() for f in reversed(files)],
                                  per_dump=per_dump) == want
    whole = spoor.triage(made, elf_dir=elfs)
    merged = spoor.triage_merge(files)
    assert [o for o in merged if "count" in o] == [o for o in whole if "count" in o]
    with pytest.raises(spoor.Error, match="merged twice"):
        spoor.triage_merge([files[0], files[0]])  # a shard merged twice

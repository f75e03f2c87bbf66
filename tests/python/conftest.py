"""Fixtures of the Python package's tests (run by run.py; see support.py)."""
import pytest

import support  # noqa: F401  (takes the sanitizer preload away from started programs first)
import harness


@pytest.fixture(scope="session")
def crash_dump(tmp_path_factory):
    """crash_dump(scenario, copy="") -> the path of a crash dump the crash example wrote on the M3
    in QEMU for that scenario (made once per session and copy name)."""
    from test_crash_scenarios import CrashQemu
    folder = tmp_path_factory.mktemp("dumps")
    made = {}

    def make(scenario, copy=""):
        key = (scenario, copy)
        if key not in made:
            elf, machine = harness.example("crash", "m3")
            path = folder / f"m3-{scenario}{copy}.bin"
            with CrashQemu(elf, machine, ["crash", scenario, str(path)]) as qemu:
                result = qemu.wait(30)
            if result.returncode != 0 or not path.is_file():
                raise AssertionError(f"{scenario}: QEMU exit {result.returncode}: {result.output}")
            made[key] = path
        return made[key]

    return make

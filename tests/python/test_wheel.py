"""`pip wheel` gives one abi3 wheel; installed into a fresh venv that sees Debian's cffi, it
imports and answers as `spoor sym --json` does."""
import json
import os
import re
import shutil

import harness
from support import BUILD, DEBIAN_PYTHON, PRELOAD, SOURCE, cli, run


def test_wheel_in_fresh_venv(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(SOURCE / "python", src,
                    ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", "*.so"))
    env = dict(os.environ, SPOOR_BUILD_DIR=str(BUILD), SPOOR_SOURCE_DIR=str(SOURCE),
               PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("ASAN_OPTIONS", None)
    run(DEBIAN_PYTHON, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-w",
        tmp_path / "wheels", src, env=env, timeout=600)
    wheels = [w.name for w in (tmp_path / "wheels").iterdir()]
    assert len(wheels) == 1, wheels
    assert re.match(r"^spoor-[0-9.]+-cp39-abi3-linux_x86_64\.whl$", wheels[0]), wheels
    venv = tmp_path / "venv"
    run(DEBIAN_PYTHON, "-m", "venv", "--system-site-packages", venv)
    run(venv / "bin" / "python", "-m", "pip", "install", "--no-index", "--no-deps",
        tmp_path / "wheels" / wheels[0])
    elf_path, _ = harness.example("crash", "m3")
    r = run(venv / "bin" / "python", "-c",
            "import json, sys, spoor; print(json.dumps(spoor.Elf(sys.argv[1]).symbolize(0x100)))",
            elf_path, cwd=tmp_path, env=dict(os.environ, **PRELOAD), timeout=120)
    want = cli("sym", "--json", "-e", elf_path, "0x100").stdout
    assert json.loads(r.stdout) == json.loads(want)

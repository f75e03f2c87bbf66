"""The wheel: `python3 -m build --wheel` (what `make python` runs) gives one cp39-abi3 wheel of the
project's version whose extension carries libspoor. Installed into a fresh venv that sees
Debian's cffi, after the build folder it was made from is gone, it imports from the venv and
answers as `spoor sym --json` and `spoor crash --json` do; its extension names no build folder."""
import json
import os
import re
import shutil

import harness
import pytest
from support import BUILD, DEBIAN_PYTHON, PRELOAD, SOURCE, cli, run


def copy_package(src):
    """A copy of python/ at src (the source tree stays clean); src."""
    shutil.copytree(SOURCE / "python", src,
                    ignore=shutil.ignore_patterns("build", "dist", "*.egg-info", "__pycache__",
                                                  "*.so"))
    return src


def build_env(build):
    """The environment of a build of the package against the build folder build, offline."""
    env = dict(os.environ, SPOOR_BUILD_DIR=str(build), SPOOR_SOURCE_DIR=str(SOURCE),
               PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("ASAN_OPTIONS", None)
    env.pop("PYTHONPATH", None)
    return env


def build_wheel(src, outdir):
    """The command `make python` builds the wheel with."""
    return DEBIAN_PYTHON, "-m", "build", "--no-isolation", "--wheel", "--outdir", outdir, src


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    """(wheel path, venv folder): the wheel built from a build folder of its own (a copy of this
    build's libspoor and its pkg-config template), installed into a fresh venv; that build folder
    is deleted before the venv is used."""
    tmp = tmp_path_factory.mktemp("wheel")
    build = tmp / "build"
    build.mkdir()
    for lib in BUILD.glob("libspoor.*"):  # libspoor.a, libspoor.so and its versioned names
        shutil.copy(lib, build, follow_symlinks=False)
    shutil.copy(BUILD / "spoor.pc.in", build)
    env = build_env(build)
    run(*build_wheel(copy_package(tmp / "src"), tmp / "wheels"), env=env, timeout=600)
    shutil.rmtree(build)
    wheels = list((tmp / "wheels").iterdir())
    assert len(wheels) == 1, wheels
    folder = tmp / "venv"
    run(DEBIAN_PYTHON, "-m", "venv", "--system-site-packages", folder)
    run(folder / "bin" / "python", "-m", "pip", "install", "--no-index", "--no-deps", wheels[0],
        env=env)
    return wheels[0], folder


def venv_python(folder, code, *args):
    """Runs code with the venv's interpreter (the sanitizer runtimes preloaded for an ASan
    build; without this suite's PYTHONPATH, so that spoor is the venv's); its stdout."""
    env = dict(os.environ, **PRELOAD)
    env.pop("PYTHONPATH", None)
    return run(folder / "bin" / "python", "-c", code, *args, cwd=folder, env=env,
               timeout=120).stdout


def test_one_abi3_wheel_of_the_project_version(venv):
    wheel, folder = venv
    version = re.match(r"spoor (\S+) ", cli("--version").stdout).group(1)
    assert wheel.name == f"spoor-{version}-cp39-abi3-linux_x86_64.whl"
    assert venv_python(folder, "import importlib.metadata as m; print(m.version('spoor'))") \
        == version + "\n"


def test_extension_names_no_build_folder(venv):
    _, folder = venv
    module = venv_python(folder, "import spoor._spoor as m; print(m.__file__)").strip()
    assert module.startswith(str(folder) + "/"), module
    dynamic = run("readelf", "-d", module).stdout
    assert "RPATH" not in dynamic and "RUNPATH" not in dynamic, dynamic
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.*)\]", dynamic)
    assert needed and not [n for n in needed if "spoor" in n], needed
    # every library it needs is found, none of them in a build folder of the project
    ldd = run("ldd", module).stdout
    assert "not found" not in ldd, ldd
    assert not [line for line in ldd.splitlines()
                if "spoor" in line or str(BUILD) in line or str(SOURCE) in line], ldd
    # libspoor's names are the extension's own: it exports its module entry point only
    exported = [line.split()[-1]
                for line in run("nm", "-D", "--defined-only", module).stdout.splitlines()]
    assert exported == ["PyInit__spoor"], exported


def test_wheel_answers_as_the_cli(venv, crash_dump):
    _, folder = venv
    elf, _ = harness.example("crash", "m3")
    dump = crash_dump("busfault")
    out = venv_python(folder, "import json, sys, spoor\n"
                              "elf = spoor.Elf(sys.argv[1])\n"
                              "print(spoor.__file__)\n"
                              "print(json.dumps(elf.symbolize(0x100)))\n"
                              "print(json.dumps(spoor.crash(elf, dump=sys.argv[2])))",
                      elf, dump).splitlines()
    assert out[0].startswith(str(folder) + "/"), out[0]
    assert json.loads(out[1]) == json.loads(cli("sym", "--json", "-e", elf, "0x100").stdout)
    assert json.loads(out[2]) == json.loads(cli("crash", "--json", "-e", elf, dump).stdout)


def test_internal_function_does_not_build(tmp_path):
    """libspoor.a also holds functions libspoor.so does not export (no public header declares
    them): a declaration of one in the package's cdefs stops the build instead of linking it."""
    public = set()
    for header in [*(SOURCE / "include" / "spoor").glob("*.h"),
                   *(SOURCE / "target" / "include" / "spoor").glob("*.h")]:
        public.update(re.findall(r"\bspoor_\w+", header.read_text()))
    defined = re.findall(r" T (spoor_\w+)$", run("nm", BUILD / "libspoor.a").stdout, re.M)
    internal = sorted(set(defined) - public)
    assert internal, "libspoor.a defines nothing beside its public API"
    src = copy_package(tmp_path / "src")
    (src / "spoor" / "_cdefs" / "zz_internal.cdef").write_text(f"void {internal[0]}(void);\n")
    r = run(*build_wheel(src, tmp_path / "wheels"), env=build_env(BUILD), check=False,
            timeout=600)
    assert r.returncode != 0
    assert re.search(rf"implicit declaration of function \W{internal[0]}\W", r.stdout + r.stderr)

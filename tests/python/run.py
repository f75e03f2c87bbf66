"""Runs the Python package's pytest suite (tests/python) the way CTest does.

    run.py --build          pip-installs python/ (offline, a copy, Debian's python3 and cffi)
                            into $SPOOR_PYTHON_SITE against $SPOOR_BUILD_DIR's libspoor.so
    run.py [PYTEST ARGS]    runs pytest on them with that package first on sys.path

It runs under Debian's /usr/bin/python3 (the interpreter with python3-cffi, python3-pytest and
python3-distributed). With an ASan build of libspoor the tests run with the sanitizer runtimes
preloaded (Python itself is not instrumented) and leak detection off (CPython keeps memory to
the end); tests/python/support.py takes the preload away from the programs the tests start."""
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

DEBIAN_PYTHON = "/usr/bin/python3"
HERE = Path(__file__).resolve().parent
SOURCE = Path(os.environ.get("SPOOR_SOURCE_DIR", HERE.parent.parent))
BUILD = Path(os.environ.get("SPOOR_BUILD_DIR", ".")).resolve()
SITE = Path(os.environ.get("SPOOR_PYTHON_SITE", BUILD / "python-site"))


def sanitizer_env():
    cache = BUILD / "CMakeCache.txt"
    if not (cache.is_file() and "SPOOR_SANITIZE:BOOL=ON" in cache.read_text()):
        return {}
    runtimes = [subprocess.run(["cc", f"-print-file-name={name}"], capture_output=True,
                               text=True, check=True).stdout.strip()
                for name in ("libasan.so", "libubsan.so")]
    return {"LD_PRELOAD": " ".join(runtimes),
            "ASAN_OPTIONS": "detect_leaks=0:quarantine_size_mb=1"}


def build():
    env = dict(os.environ, SPOOR_BUILD_DIR=str(BUILD), SPOOR_SOURCE_DIR=str(SOURCE),
               PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    for k in ("LD_PRELOAD", "ASAN_OPTIONS"):
        env.pop(k, None)
    with tempfile.TemporaryDirectory(prefix="spoor-python-src-") as tmp:
        src = Path(tmp) / "python"
        shutil.copytree(SOURCE / "python", src,
                        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", "*.so"))
        if SITE.exists():
            shutil.rmtree(SITE)
        r = subprocess.run([DEBIAN_PYTHON, "-m", "pip", "install", "--no-build-isolation",
                            "--no-deps", "--target", str(SITE), str(src)],
                           capture_output=True, text=True, env=env, timeout=600)
    if r.returncode != 0:
        sys.exit(f"pip install of python/ failed:\n{r.stdout}\n{r.stderr}")
    print(f"spoor package built into {SITE}")


def main():
    args = sys.argv[1:]
    if args == ["--build"]:
        if sys.executable != DEBIAN_PYTHON:
            os.execv(DEBIAN_PYTHON, [DEBIAN_PYTHON, __file__, *args])
        return build()
    if not (SITE / "spoor").is_dir():
        sys.exit(f"no built package in {SITE}: run {__file__} --build first")
    env = dict(os.environ, **sanitizer_env())
    env["PYTHONPATH"] = os.pathsep.join([str(SITE), str(HERE), str(SOURCE / "tests" / "e2e")]
                                        + [p for p in [os.environ.get("PYTHONPATH")] if p])
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    os.execve(DEBIAN_PYTHON, [DEBIAN_PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                              "--rootdir", str(HERE), *args], env)


if __name__ == "__main__":
    main()

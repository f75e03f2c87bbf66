"""Builds the spoor package with a build of libspoor linked in (SPOOR_BUILD_DIR, see spoor/_build.py).
Its version is the project's: project(VERSION) of the CMakeLists.txt in SPOOR_SOURCE_DIR (default:
the folder above python/)."""
import os
import re
from pathlib import Path

from setuptools import setup

SOURCE_DIR = Path(os.environ.get("SPOOR_SOURCE_DIR", Path(__file__).resolve().parent.parent))
VERSION = re.search(r"^project\(spoor VERSION ([0-9.]+)\b",
                    (SOURCE_DIR / "CMakeLists.txt").read_text(), re.M).group(1)

setup(
    name="spoor",
    version=VERSION,
    description="Cortex-M crash dumps, symbols and fleet triage from Python, over libspoor",
    packages=["spoor"],
    package_data={"spoor": ["py.typed"]},
    python_requires=">=3.9",
    setup_requires=["cffi>=1.15"],
    install_requires=["cffi>=1.15"],
    cffi_modules=["spoor/_build.py:ffibuilder"],
    zip_safe=False,
    entry_points={"pytest11": ["spoor = spoor.pytest_plugin"]},  # the pytest plugin
    # the extension uses the stable ABI only: one wheel for every CPython >= 3.9
    options={"bdist_wheel": {"py_limited_api": "cp39"}},
)

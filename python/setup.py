"""Builds the spoor package against a build of libspoor (SPOOR_BUILD_DIR, see spoor/_build.py)."""
from setuptools import setup

setup(
    name="spoor",
    version="0.1.0",
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

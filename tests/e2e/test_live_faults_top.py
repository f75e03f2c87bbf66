"""spoor top -s STREAM --gdb on a running target through the misbehaving GDB server
tests/e2e/faulty_gdb.py: the "top" section of tests/e2e/test_live_faults.py (its docstring says
what is checked), run as a test of its own so that each stays well within ctest's time limit."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import test_live_faults  # noqa: E402

if __name__ == "__main__":
    sys.exit(test_live_faults.main(["top"]))

"""What the spoor top / thread tests share (test_top_*.py, test_crash_threads.py): one list of
failures for all of them (a helper imported from another test reports into the same list) and
the end of a run."""

failures = []


def check(condition, message):
    """Records a failure (and prints it) unless condition holds."""
    if not condition:
        failures.append(message)
        print("FAIL:", message)


def exit_status():
    """1 when any check failed, else 0; says which."""
    if failures:
        print(f"{len(failures)} failures")
        return 1
    print("ok")
    return 0


def run_cores(run_core, cores=("m3", "m4f")):
    """run_core(core, work) for each core of the example scheduler, each in a fresh directory;
    then the exit status."""
    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory() as tmp:
        for core in cores:
            work = Path(tmp) / core
            work.mkdir()
            run_core(core, work)
    return exit_status()


def minimal_regs(work):
    """A regs.json with pc, sp, lr and xpsr only (for --regs with --mem images) in work."""
    regs = work / "regs.json"
    regs.write_text('{"pc": "0x00000100", "sp": "0x20001000", "lr": "0xffffffff", '
                    '"xpsr": "0x01000000"}')
    return regs

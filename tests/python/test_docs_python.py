"""docs/python.md's example (its first ```python block) runs, with ELF, DUMP, ELF_DIR and DUMPS
given."""
import shutil

import harness
from support import SOURCE


def test_python_md_example(crash_dump, tmp_path):
    text = (SOURCE / "docs" / "python.md").read_text()
    block = text.split("```python\n", 1)[1].split("```", 1)[0]
    elf_path, _ = harness.example("crash", "m3")
    elfs, dumps = tmp_path / "doc-elfs", tmp_path / "dumps"
    elfs.mkdir()
    dumps.mkdir()
    shutil.copy(elf_path, elfs)
    dump = crash_dump("busfault")
    shutil.copy(dump, dumps)
    names = {"ELF": str(elf_path), "DUMP": str(dump), "ELF_DIR": str(elfs), "DUMPS": str(dumps)}
    code = block
    for k, v in names.items():
        code = code.replace(f'"{k}"', repr(v))
    exec(compile(code, "docs/python.md", "exec"), {})

"""The README's examples run as printed: its `pycon` sessions are doctests, and its `python`
blocks compile (the ones that need a broker run in tests/partitioners/test_adapters.py)."""

import doctest
import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_opens_with_the_two_commands() -> None:
    text = README.read_text()
    head = text[: text.index("\n## ")]
    assert "make run" in head and "make test" in head


def test_readme_sessions_run_as_printed() -> None:
    failures, tried = doctest.testfile(
        str(README), module_relative=False, optionflags=doctest.ELLIPSIS
    )
    assert tried > 5
    assert failures == 0


def test_readme_python_blocks_compile() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert blocks
    for b in blocks:
        compile(b, "README.md", "exec")

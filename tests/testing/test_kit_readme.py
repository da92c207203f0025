"""The README's "Testing an application that uses Kafka" examples run as printed: each of the
section's python blocks is a test file, run by pytest with kgroup's plugin as a user's suite
would run it (the fixture from the entry point where kgroup is installed)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.kit import plugin_args

README = Path(__file__).resolve().parents[2] / "README.md"
SECTION = "## Testing an application that uses Kafka"


def section_blocks() -> list[str]:
    text = README.read_text()
    start = text.index(SECTION)
    end = text.index("\n## ", start + len(SECTION))
    return re.findall(r"```python\n(.*?)```", text[start:end], re.S)


def test_every_example_is_a_test() -> None:
    blocks = section_blocks()
    assert len(blocks) == 5
    assert all("def test_" in b for b in blocks)


@pytest.mark.network
def test_readme_examples_pass(pytester: pytest.Pytester) -> None:
    files = {f"test_readme_{i}": block for i, block in enumerate(section_blocks())}
    pytester.makepyfile(**files)
    result = pytester.runpytest_subprocess(*plugin_args(), "-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=len(files))

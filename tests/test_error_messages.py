"""Library errors name the setting to change, never a command-line flag (issue 16): the CLI
adds where the setting is set (flag, config key, environment variable), so that a Python
caller is not told about flags it does not have."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from digest import errors

ROOT = Path(__file__).parent.parent
FLAG = re.compile(r"(?:^|[\s(`'\"])--(?!force-reinstall)[a-z][a-z-]+")
ERROR_NAMES = {name for name in dir(errors) if name.endswith(("Error", "Unavailable", "Busy"))}
ERROR_NAMES |= {"DeadlineReached", "MissingFolder", "RequestRejected", "QuotaExhausted"}


def _messages(path: Path) -> list[tuple[int, str]]:
    """The text of every string literal inside a call that builds an error."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ERROR_NAMES:
            for inner in ast.walk(node):
                if isinstance(inner, ast.Constant) and isinstance(inner.value, str):
                    found.append((inner.lineno, inner.value))
    return found


LIBRARY = sorted(p for p in (ROOT / "digest").rglob("*.py") if p.name != "cli.py")


@pytest.mark.parametrize("path", LIBRARY, ids=lambda p: str(p.relative_to(ROOT)))
def test_library_errors_name_no_command_line_flag(path):
    flagged = [(line, text) for line, text in _messages(path) if FLAG.search(text)]
    assert flagged == []


def test_the_check_finds_a_flag_where_there_is_one(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text('raise ConfigError(f"--week {w!r}: bad")\nraise StateError("ok")\n')
    assert [text for _, text in _messages(sample) if FLAG.search(text)] == ["--week "]

"""The README is the front door: every command and every option it has must be in it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from digest.cli import app

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
COMMANDS = typer.main.get_command(app).commands  # type: ignore[attr-defined]


def test_the_readme_gives_the_two_commands():
    assert "make demo" in README and "make test" in README
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^demo:", makefile, re.M) and re.search(r"^test:", makefile, re.M)
    assert "make test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_has_help_and_is_in_the_readme(name):
    result = CliRunner().invoke(app, [name, "--help"])
    assert result.exit_code == 0
    assert COMMANDS[name].help, f"digest {name} has no help text"
    assert f"digest {name}" in README, f"README does not mention `digest {name}`"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_option_is_in_the_readme(name):
    options = [opt for param in COMMANDS[name].params for opt in param.opts
               if opt.startswith("--") and opt != "--help"]
    missing = [opt for opt in options if f"`{opt}" not in README]
    assert not missing, f"digest {name}: README does not document {', '.join(missing)}"


def test_the_exit_codes_are_documented():
    for code in ("0", "1", "2", "75"):
        assert re.search(rf"^\| {code} \|", README, re.M), f"exit code {code} not in README"

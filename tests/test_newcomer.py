"""What a newcomer hit first (issue 16, point 6), each reproduced here."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

import digest
from digest.cli import app

ROOT = Path(__file__).parent.parent
EXAMPLES = str(ROOT / "examples")


def _run(*args: str):
    return CliRunner().invoke(app, list(args))


def test_help_shows_the_defaults_in_brackets():
    text = " ".join(_run("newsletter", "--help").output.replace("│", " ").split())
    assert "Output folder [default: outputs/]." in text
    assert "Model name [env DIGEST_MODEL]." in text
    assert "Output folder ." not in text


def test_a_lower_case_week_is_accepted():
    lower = _run("summarize", EXAMPLES, "--week", "2026-w47", "--backend", "offline")
    upper = _run("summarize", EXAMPLES, "--week", "2026-W47", "--backend", "offline")
    assert lower.exit_code == 0, lower.output
    assert lower.stdout == upper.stdout


@pytest.mark.parametrize("flag", ["--prompts", "--templates"])
def test_a_missing_prompts_or_templates_folder_is_the_same_usage_error(flag, tmp_path):
    result = _run("summarize", EXAMPLES, "--week", "2026-W47", "--backend", "offline", flag,
                  str(tmp_path / "nowhere"))
    assert result.exit_code == 2, result.output
    assert re.search(r"nowhere: no such folder", result.output)
    assert flag in result.output  # the CLI names its flag


def test_report_dash_writes_the_report_to_stdout(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = _run("dedup", EXAMPLES, "--report", "-")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout[result.stdout.index("{"):])
    assert report["counts"]["records_read"] > 0
    assert not Path("-").exists()


def test_config_values_of_the_wrong_type_say_so_in_english(tmp_path):
    config = tmp_path / "digest.toml"
    config.write_text("max_themes = 'many'\n", encoding="utf-8")
    result = _run("config", "--config", str(config))
    assert result.exit_code == 2
    assert "must be an integer" in result.output and "a int" not in result.output


def test_shell_completion_is_offered(monkeypatch):
    # Typer detects the shell from the process tree (shellingham), which a test runner's
    # parents make a matter of chance; naming the shell is what this test is about.
    monkeypatch.setenv("_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION", "1")
    result = CliRunner().invoke(app, ["--show-completion", "bash"], prog_name="digest")
    assert result.exit_code == 0, result.output
    assert "_DIGEST_COMPLETE" in result.output


def test_make_clean_removes_outputs_and_caches_and_ci_lints():
    import subprocess

    planned = subprocess.run(["make", "-n", "clean"], cwd=ROOT, capture_output=True, text=True,
                             timeout=30, check=True).stdout
    for target in (".venv", ".mypy_cache", ".ruff_cache", "__pycache__", "outputs"):
        assert target in planned, f"make clean leaves {target}"
    assert "make lint" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_ingest_dash_on_a_terminal_says_it_is_waiting(tmp_path):
    """A person typing `digest ingest -` gets told what it waits for (a mail hook does not)."""
    import os
    import pty
    import subprocess
    import sys

    primary, secondary = pty.openpty()
    env = {**os.environ, "DIGEST_STATE": str(tmp_path / "state.sqlite")}
    process = subprocess.Popen([sys.executable, "-m", "digest", "ingest", "-"], stdin=secondary,
                               stderr=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    os.close(secondary)
    try:
        os.write(primary, b"\x04")  # Ctrl-D: end of input on an empty line
        _, stderr = process.communicate(timeout=30)
    finally:
        process.kill()
        os.close(primary)
    assert b"Reading a listing from the terminal; end it with Ctrl-D." in stderr


def test_quiet_keeps_warnings_off_stderr(tmp_path):
    listing = tmp_path / "cut.jsonl"
    listing.write_text('{"title": "Graph learning at scale, in depth", "abstract": "We study '
                       'graph learning with many words here.", "url": "https://arxiv.org/abs/'
                       '2601.00001"}\nnot json\n', encoding="utf-8")
    args = ["summarize", str(listing), "--week", "2026-W47", "--backend", "offline"]
    loud, quiet = _run(*args), _run(*args, "-q")
    assert loud.exit_code == quiet.exit_code == 0
    assert "WARNING" in loud.stderr and "cut.jsonl:2" in loud.stderr
    assert quiet.stderr == "" and quiet.stdout == loud.stdout


def test_where_a_setting_is_set_names_flag_config_key_and_variable():
    from digest.settings import setting_sources
    assert setting_sources("model", {"model": "--model"}) == (
        "--model, `model` in the config file or $DIGEST_MODEL")
    assert setting_sources("api_key") == "$OPENAI_API_KEY"  # a secret: environment only
    assert setting_sources("max_cost").startswith("`max_cost` in the config file")
    assert setting_sources("wait", {"wait": "--wait"}) == "--wait"  # a run option, not a setting


def test_a_library_error_names_its_setting_and_the_cli_adds_the_flag():
    error = digest.ConfigError("timeout must be a positive number", setting="timeout")
    assert error.setting == "timeout" and "--timeout" not in str(error)


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


def test_a_dry_run_writes_nothing_not_even_a_store_or_its_lock(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.chdir(tmp_path)
    result = _run("newsletter", EXAMPLES, "--week", "2026-W47", "--out", "out", "--state",
                  "state.sqlite", "--backend", "openai", "--base-url", "http://127.0.0.1:9/v1",
                  "--dry-run")
    assert result.exit_code == 0, result.output
    assert "total" in result.stdout  # the plan was printed
    assert _tree(tmp_path) == {}


def test_a_dry_run_reads_an_old_store_without_upgrading_or_touching_it(tmp_path, monkeypatch):
    import sqlite3

    from digest.state import MIGRATIONS
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.chdir(tmp_path)
    db = sqlite3.connect("state.sqlite")
    for script in MIGRATIONS[:2]:
        db.executescript(script)
    db.execute("PRAGMA user_version=2")
    db.commit()
    db.close()
    before = _tree(tmp_path)
    result = _run("newsletter", EXAMPLES, "--week", "2026-W47", "--out", "out", "--state",
                  "state.sqlite", "--backend", "openai", "--base-url", "http://127.0.0.1:9/v1",
                  "--dry-run", "--new-store")
    assert result.exit_code == 0, result.output
    assert _tree(tmp_path) == before

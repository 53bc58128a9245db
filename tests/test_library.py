"""The library is the product: the README's Python example prints what the CLI prints, and the
public names are pinned."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

import digest
from digest.cli import app

ROOT = Path(__file__).parent.parent
SECTION = (ROOT / "README.md").read_text(encoding="utf-8").split("## Use from Python", 1)[1]
SECTION = SECTION.split("\n## ", 1)[0]


def test_the_readme_example_prints_what_digest_summarize_prints(monkeypatch):
    monkeypatch.chdir(ROOT)
    example = re.search(r"```python\n(.*?)```", SECTION, re.S)
    command = re.search(r"`digest summarize ([^`]*)`", SECTION)
    assert example and command
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(example.group(1), "README.md", "exec"), {})  # noqa: S102
    result = CliRunner().invoke(app, ["summarize", *command.group(1).split()])
    assert result.exit_code == 0, result.output
    assert printed.getvalue() == result.stdout
    assert printed.getvalue().startswith("# ") and "2026-W47" in printed.getvalue()


def test_python_callers_get_the_configured_budget_and_themes(tmp_path):
    """From Python the settings decide, as from the CLI: a config file's max_themes holds."""
    config = tmp_path / "digest.toml"
    config.write_text("max_themes = 2\n", encoding="utf-8")
    run = digest.Digest(digest.resolve_settings({"backend": "offline"}, config))
    built = run.summarize([str(ROOT / "examples")], week="2026-W47")
    assert 1 <= len(built.issue.sections) <= 2
    cli = CliRunner().invoke(app, ["summarize", str(ROOT / "examples"), "--week", "2026-W47",
                                   "--backend", "offline", "--config", str(config)])
    assert cli.stdout == built.markdown


def test_a_missing_templates_folder_is_a_settings_error_before_any_work(tmp_path):
    run = digest.Digest(digest.resolve_settings({"templates": str(tmp_path / "nowhere")}))
    with pytest.raises(digest.ConfigError, match="nowhere: no such folder"):
        run.options("2026-W47")


def test_the_public_api_is_pinned():
    assert sorted(digest.__all__) == [
        "BACKENDS", "Batch", "Budget", "Built", "ChatBackend", "ChatRequest", "Completion",
        "ConfigError", "DedupResult", "Digest", "DigestError", "IngestResult", "Issue",
        "LLMError", "LLMUnavailable", "MailChoices", "Mailed", "Options", "Paper",
        "PublishChoices", "Published", "Record", "Renderer", "RunReport", "Settings",
        "Sighting", "SourceError", "StateError", "Store", "TemplateError", "Theme",
        "ThemeSummary", "build_issue", "deduplicate", "escape_markdown", "group_papers",
        "load_sources", "plan_batches", "register_backend", "resolve_settings", "write_issue"]
    for name in digest.__all__:
        assert getattr(digest, name) is not None, name


def test_built_markdown_is_exactly_what_newsletter_writes(tmp_path):
    """With earlier issues in the output folder the written file gains "Rising themes": the
    Built the library returns must already be that file."""
    from digest.outputs import publish
    from digest.report import RunReport

    from .render_samples import earlier_issue

    out = tmp_path / "out"
    out.mkdir()
    publish(earlier_issue("2026-W46"), out, formats=["md"])
    run = digest.Digest(digest.resolve_settings({"backend": "offline"}))
    with digest.Store(tmp_path / "state.sqlite") as store:
        built = run.build([str(ROOT / "examples")], run.options("2026-W47"), store, out=out)
        path = digest.write_issue(built, out, store, RunReport())
    written = path.read_text(encoding="utf-8")
    assert "Rising themes" in written
    assert written == built.markdown


def test_the_newsletter_job_from_python_writes_what_the_cli_writes(tmp_path):
    from typer.testing import CliRunner

    from digest.cli import app

    settings = {"backend": "offline", "out": str(tmp_path / "lib"),
                "state": str(tmp_path / "lib.sqlite")}
    run = digest.Digest(digest.resolve_settings(settings))
    done = run.newsletter([str(ROOT / "examples")], run.options("2026-W47"))
    assert done.weeks == ["2026-W47"] and done.paths == [tmp_path / "lib" / "2026-W47.md"]
    result = CliRunner().invoke(app, [
        "newsletter", str(ROOT / "examples"), "--week", "2026-W47", "--backend", "offline",
        "--out", str(tmp_path / "cli"), "--state", str(tmp_path / "cli.sqlite")])
    assert result.exit_code == 0, result.output
    assert done.paths[0].read_bytes() == (tmp_path / "cli" / "2026-W47.md").read_bytes()


def test_the_readme_newsletter_example_writes_what_digest_newsletter_writes(tmp_path, monkeypatch):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path / "lib")
    examples = re.findall(r"```python\n(.*?)```", SECTION, re.S)
    command = re.search(r"`digest newsletter ([^`]*)`", SECTION)
    assert len(examples) == 2 and command
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(examples[1], "README.md", "exec"), {})  # noqa: S102
    assert printed.getvalue().strip() == "[PosixPath('outputs/2026-W47.md')]"
    (tmp_path / "cli").mkdir()
    (tmp_path / "cli" / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path / "cli")
    result = CliRunner().invoke(app, ["newsletter", *command.group(1).split(),
                                      "--formats", "md,html"])
    assert result.exit_code == 0, result.output
    for name in ("2026-W47.md", "2026-W47.html"):
        assert ((tmp_path / "lib" / "outputs" / name).read_bytes()
                == (tmp_path / "cli" / "outputs" / name).read_bytes())

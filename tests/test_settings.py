"""Settings resolved once (flag > env > file > default), shown with their origin, secrets masked;
`digest init` writes a starter config that loads, and never overwrites."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from digest.cli import app
from digest.config import load_config
from digest.errors import ConfigError
from digest.settings import MASK, STARTER, resolve_settings, starter_config

from .conftest import EXAMPLES


def _toml(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "digest.toml"
    path.write_text(body, encoding="utf-8")
    return path


def test_each_level_wins_over_the_next(tmp_path):
    path = _toml(tmp_path, '[digest]\nmodel = "from-file"\nmax_themes = 7\nout = "file-out"\n')
    environ = {"DIGEST_MODEL": "from-env", "DIGEST_STATE": "/env/state.sqlite"}
    settings = resolve_settings({"out": "flag-out", "backend": None}, path, environ)
    assert (settings["out"], settings.origin("out")) == ("flag-out", "flag")
    assert (settings["model"], settings.origin("model")) == ("from-env", "env DIGEST_MODEL")
    assert (settings["state"], settings.origin("state")) == ("/env/state.sqlite",
                                                             "env DIGEST_STATE")
    assert (settings["max_themes"], settings.origin("max_themes")) == (7, f"file {path}")
    assert (settings["backend"], settings.origin("backend")) == ("auto", "default")
    assert settings["deadline"] == 900.0 and settings["timeout"] is None


def test_an_empty_environment_variable_does_not_count(tmp_path):
    path = _toml(tmp_path, 'model = "from-file"\n')
    settings = resolve_settings(config_path=path, environ={"DIGEST_MODEL": ""})
    assert settings["model"] == "from-file"


def test_the_llm_stage_is_made_from_the_resolved_settings_alone(tmp_path, monkeypatch):
    """Settings are resolved once: the LLM wiring reads neither the environment nor the file
    again (it used to resolve model, URL and key a second time, from both)."""
    from digest.llm.wiring import backend_settings, llm_setup

    path = _toml(tmp_path, 'model = "file-model"\nconcurrency = 3\n')
    settings = resolve_settings({"backend": "openai", "base_url": "http://127.0.0.1:9/v1"}, path,
                                environ={"OPENAI_API_KEY": "sk-resolved"})
    monkeypatch.setenv("DIGEST_MODEL", "env-model")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-environment")
    reached = backend_settings(settings)
    assert (reached.model, reached.base_url, reached.api_key) == (
        "file-model", "http://127.0.0.1:9/v1", "sk-resolved")
    with llm_setup(settings) as setup:
        assert setup.backend.model == "file-model" and setup.limits.concurrency == 3


def test_secrets_come_only_from_the_environment(tmp_path):
    path = _toml(tmp_path, 'api_key = "sk-in-file"\n')
    with pytest.raises(ConfigError, match="unknown keys api_key"):
        resolve_settings(config_path=path)


def test_digest_config_shows_origins_and_masks_secrets(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-very-secret-key")
    monkeypatch.setenv("DIGEST_SMTP_PASSWORD", "hunter2-smtp")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://bob:pw-in-url@127.0.0.1:9/v1?api-key=qs-key")
    path = _toml(tmp_path, "[digest]\nmax_themes = 4\n")
    result = CliRunner().invoke(app, ["config", "--config", str(path)])
    assert result.exit_code == 0, result.output
    for secret in ("sk-very-secret-key", "hunter2-smtp", "pw-in-url", "qs-key"):
        assert secret not in result.output
    assert re.search(r"^api_key\s+= \*+\s+\(env OPENAI_API_KEY\)$", result.output, re.M)
    assert re.search(r"^max_themes\s+= 4\s+\(file .*digest\.toml\)$", result.output, re.M)
    assert f"http://bob:{MASK}@127.0.0.1:9/v1?api-key={MASK}" in result.output
    shown = json.loads(CliRunner().invoke(app, ["config", "--config", str(path), "--json"]
                                          ).output)
    assert shown["smtp_password"] == {"value": MASK, "from": "env DIGEST_SMTP_PASSWORD"}
    assert shown["backend"] == {"value": "auto", "from": "default"}


def test_digest_config_names_a_bad_config_file(tmp_path):
    path = _toml(tmp_path, "max_themes = 'many'\n")
    result = CliRunner().invoke(app, ["config", "--config", str(path)])
    assert result.exit_code == 2
    assert "max_themes" in result.output and "Traceback" not in result.output


def test_init_writes_a_starter_that_loads_and_refuses_to_overwrite(tmp_path):
    path = tmp_path / "digest.toml"
    result = CliRunner().invoke(app, ["init", str(path)])
    assert result.exit_code == 0, result.output
    assert path.read_text(encoding="utf-8") == STARTER
    assert load_config(path) == {}  # everything commented: the defaults hold
    path.write_text("model = 'mine'\n", encoding="utf-8")
    again = CliRunner().invoke(app, ["init", str(path)])
    assert again.exit_code == 2 and "already exists" in again.output
    assert path.read_text(encoding="utf-8") == "model = 'mine'\n"


def test_every_key_the_starter_documents_is_a_real_one(tmp_path):
    """Uncomment the starter's examples: the result must load (no unknown key, right types)."""
    uncommented = re.sub(r"^# (\w+ = .*?)([ \t]+#.*)?$", r"\1", STARTER, flags=re.M)
    uncommented = uncommented.replace("# [[themes]]", "[[themes]]")
    keys = re.findall(r"^(\w+) = ", uncommented, re.M)
    assert len(keys) >= 12
    data = load_config(_toml(tmp_path, uncommented))
    assert data["backend"] == "auto" and data["themes"]


def test_starter_config_refuses_an_existing_file_from_python(tmp_path):
    path = tmp_path / "digest.toml"
    starter_config(path)
    with pytest.raises(ConfigError, match="already exists"):
        starter_config(path)


def test_a_config_file_that_is_not_utf8_is_a_usage_error_naming_it_and_the_line(tmp_path):
    """A config file saved in Latin-1 ended in a UnicodeDecodeError traceback, exit 1 (a probe):
    only a missing file and bad TOML were caught."""
    path = tmp_path / "c.toml"
    path.write_bytes(b'backend = "offline"\nmodel = "caf\xe9"\n')
    result = CliRunner().invoke(app, ["summarize", str(EXAMPLES), "--config", str(path)])
    assert result.exit_code == 2
    assert f"{path}: not valid UTF-8 (line 2): save it as UTF-8" in result.stderr
    assert "Traceback" not in result.output


def test_a_config_path_that_is_a_folder_is_a_usage_error_naming_the_config_file(tmp_path):
    """`--config somedir` said "cannot write (Is a directory) … choose another output folder
    (set by --out …)", exit 1 (a probe): it blamed the output folder for the config file."""
    result = CliRunner().invoke(app, ["summarize", str(EXAMPLES), "--config", str(tmp_path)])
    assert result.exit_code == 2
    assert f"config file {tmp_path}: a folder, not a file" in result.stderr
    assert "--out" not in result.stderr


@pytest.mark.parametrize("body", ["digest = 3\n", 'digest = "x"\n', "[[digest]]\n"])
def test_a_digest_key_that_is_not_a_table_is_a_usage_error(tmp_path, body):
    """`digest = 3`, `digest = "x"` or `[[digest]]` ended in "TypeError: 'int' object is not a
    mapping", exit 1 (a probe)."""
    path = _toml(tmp_path, body)
    with pytest.raises(ConfigError, match=r"digest\.toml: \[digest\] must be a table"):
        load_config(path)
    result = CliRunner().invoke(app, ["config", "--config", str(path)])
    assert result.exit_code == 2 and "[digest] must be a table" in result.stderr


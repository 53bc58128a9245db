"""Settings resolved once (flag > env > file > default), shown with their origin, secrets masked;
`digest init` writes a starter config that loads, and never overwrites."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from digest.cli import app
from digest.config import BOUNDS, load_config
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


def test_init_into_a_folder_that_does_not_exist_is_exit_1_with_the_fix(tmp_path):
    """It was exit 2 (usage), where the exit-code table gives 1 for an output file that
    cannot be written (a probe, stop 31)."""
    result = CliRunner().invoke(app, ["init", str(tmp_path / "none" / "x.toml")])
    assert result.exit_code == 1, result.output
    assert "cannot write (No such file or directory)" in result.output
    assert "create its folder first" in result.output


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


@pytest.mark.parametrize(("line", "bounds"), [
    ("timeout = -5", "from 0.1 to 86400"), ("timeout = 0", "from 0.1 to 86400"),
    ("timeout = 1e300", "from 0.1 to 86400"), ("deadline = nan", "from 0.1 to 86400"),
    ("deadline = -1", "from 0.1 to 86400"), ("deadline = inf", "from 0.1 to 86400"),
    ("max_tokens = 0", "at least 1"), ("concurrency = 100000", "from 1 to 64"),
    ("concurrency = 0", "from 1 to 64"), ("batch_tokens = -5", "at least 1"),
    ("context_window = -1", "at least 1"), ("max_output_tokens = -1", "at least 1"),
    ("batch_price_factor = -1", "from 0 to 1"), ("max_cost = nan", "at least 0"),
    ("max_cost = -1", "at least 0"), ("max_themes = 0", "from 1 to 50"),
    ("max_papers = 0", "at least 1")])
def test_a_number_in_the_config_file_out_of_its_bounds_is_a_usage_error_naming_them(
        tmp_path, line, bounds):
    """The config file took what the flags refuse (timeout = 0, concurrency = 100000,
    max_cost = nan turned the spending cap off silently); timeout = -5 and deadline = nan ended
    in a ValueError traceback once the LLM stage started (a probe)."""
    path = _toml(tmp_path, line + "\n")
    key = line.split(" = ")[0]
    with pytest.raises(ConfigError, match=rf"digest\.toml: '{key}' = .*must be .*{bounds}"):
        load_config(path)


@pytest.mark.parametrize("line", ["timeout = -5", "deadline = nan"])
def test_a_timeout_or_deadline_out_of_bounds_stops_an_llm_run_with_exit_2(tmp_path, line):
    path = _toml(tmp_path, line + "\n")
    result = CliRunner().invoke(app, ["summarize", str(EXAMPLES), "--config", str(path),
                                      "--base-url", "http://127.0.0.1:9/v1"])
    assert result.exit_code == 2, result.output
    assert f"'{line.split(' = ')[0]}'" in result.stderr and "Traceback" not in result.output


def test_a_number_in_bounds_is_taken_as_written(tmp_path):
    path = _toml(tmp_path, "timeout = 0.1\ndeadline = 86400\nconcurrency = 64\nmax_cost = 0\n"
                 "batch_price_factor = 1\nmax_themes = 50\n")
    assert load_config(path)["concurrency"] == 64


def test_a_flag_or_variable_out_of_bounds_is_refused_as_the_file_value_would_be():
    """The same bounds hold for a Python caller's value and an environment variable
    ($DIGEST_SMTP_PORT = 99999 went on to the SMTP client)."""
    with pytest.raises(ConfigError, match=r"max_cost = inf: must be .*at least 0") as caught:
        resolve_settings({"max_cost": float("inf")})
    assert caught.value.setting == "max_cost"
    with pytest.raises(ConfigError, match=r"smtp_port = '99999': must be from 1 to 65535"):
        resolve_settings(environ={"DIGEST_SMTP_PORT": "99999"})
    assert resolve_settings(environ={"DIGEST_SMTP_PORT": "25"})["smtp_port"] == "25"


def test_the_flags_take_their_bounds_from_the_settings_table():
    """One table of bounds: a flag cannot drift from what the config file accepts."""
    command = typer.main.get_command(app)
    options = [param for sub in command.commands.values() for param in sub.params
               if param.name in BOUNDS]
    assert {param.name for param in options} >= {
        "max_themes", "max_papers", "timeout", "deadline", "concurrency", "max_cost",
        "max_tokens", "smtp_port"}
    for param in options:
        assert (param.min, param.max) == (BOUNDS[param.name].low, BOUNDS[param.name].high), (
            param.name)


def test_values_from_an_env_file_with_crlf_line_ends_lose_the_carriage_return(monkeypatch):
    """`set -a; . ./env` of a file saved with CRLF line ends: every value ended in "\\r" (a
    key no request could carry, a password the server refused; a probe, stop 28)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-crlf-0123456789\r")
    monkeypatch.setenv("DIGEST_SMTP_PASSWORD", "pw-with-cr\r")
    settings = resolve_settings()
    assert settings["api_key"] == "sk-crlf-0123456789"
    assert settings["smtp_password"] == "pw-with-cr"


def test_an_api_key_with_spaces_around_it_is_used_and_masked_without_them(monkeypatch):
    """The key was stripped before it was sent but masked as given, so a server's echo of it
    reached the log and the report in clear (a probe, stop 28)."""
    monkeypatch.setenv("OPENAI_API_KEY", "  sk-spaced-0123456789 ")
    assert resolve_settings()["api_key"] == "sk-spaced-0123456789"


@pytest.mark.parametrize("url", ["http://user:pa/ss55word@127.0.0.1:18999/v1",
                                 "http://user:pa#ss55word@127.0.0.1:18999/v1",
                                 "http://user:pa?ss55word@127.0.0.1:18999/v1",
                                 "user:ss55word@127.0.0.1:18999/v1"])
def test_a_password_with_url_characters_in_it_is_masked_too(url):
    """A "/", "#" or "?" in the password (or no scheme) made the parser see no password, and
    `digest config` and the errors showed it (a probe, stop 28)."""
    from digest.redaction import url_for_logs
    for shown in (url_for_logs(url), url_for_logs(url, keep_user=True)):
        assert "ss55word" not in shown and "127.0.0.1:18999" in shown, shown


# A value of each TOML type, and the types each kind of CONFIG_KEYS takes.
TOML_VALUES = {"a string": '"x"', "an integer": "7", "a float": "2.5", "a boolean": "true",
               "an array": "[1, 2]", "a table": "{ a = 1 }",
               "a date-time": "2026-01-01T00:00:00Z", "a date": "2026-01-01"}
RIGHT_TYPES = {str: {"a string"}, int: {"an integer"}, float: {"an integer", "a float"},
               bool: {"a boolean"}, "batch_api": {"a boolean"}}  # a string only from a list


def _wrong_values() -> list[tuple[str, str]]:
    from digest.config import CONFIG_KEYS
    return [(key, toml_type) for key, kind in CONFIG_KEYS.items() for toml_type in TOML_VALUES
            if toml_type not in RIGHT_TYPES.get(key, RIGHT_TYPES.get(kind, set()))]


@pytest.mark.parametrize(("key", "toml_type"), _wrong_values())
def test_a_config_value_of_the_wrong_toml_type_is_one_line_naming_the_key(tmp_path, key,
                                                                          toml_type):
    """`batch_api = 3` ended in "KeyError: <class 'object'>", exit 1: its kind had no name to
    show (a probe, stop 28). Every key, with a value of every TOML type it does not take, is
    a usage error naming the file and the key, never a traceback."""
    path = _toml(tmp_path, f"{key} = {TOML_VALUES[toml_type]}\n")
    result = CliRunner().invoke(app, ["config", "--config", str(path)])
    assert result.exit_code == 2, (result.output, result.exception)
    assert f"digest.toml: '{key}' must be " in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.output


def test_every_kind_of_config_key_has_a_name_for_its_error():
    from digest.config import CONFIG_KEYS
    from digest.tables import KIND_NAMES
    assert set(CONFIG_KEYS.values()) <= set(KIND_NAMES)


@pytest.mark.parametrize(("line", "mode"), [
    ("batch_api = true", True), ("batch_api = false", False), ('batch_api = "auto"', "auto"),
    ('batch_api = "true"', True), ('batch_api = " False "', False), ('batch_api = "AUTO"', "auto")])
def test_batch_api_takes_true_false_and_auto_as_booleans_or_strings(tmp_path, line, mode):
    """The README's `batch_api = true` (or false) ended in a KeyError traceback, exit 1: only
    the strings were taken (a probe, stop 28)."""
    from digest.batchjobs import batch_mode
    path = _toml(tmp_path, line + "\n")
    assert batch_mode(resolve_settings(config_path=path)["batch_api"]) == mode
    result = CliRunner().invoke(app, ["summarize", str(EXAMPLES), "--backend", "offline",
                                      "--config", str(path)])
    assert result.exit_code == 0, (result.output, result.exception)


@pytest.mark.parametrize("value", ['"sometimes"', '""', '"yes"'])
def test_batch_api_of_another_string_is_a_usage_error_naming_the_allowed_values(tmp_path,
                                                                                value):
    path = _toml(tmp_path, f"batch_api = {value}\n")
    result = CliRunner().invoke(app, ["summarize", str(EXAMPLES), "--backend", "offline",
                                      "--config", str(path)])
    assert result.exit_code == 2, (result.output, result.exception)
    assert "digest.toml: 'batch_api' must be true, false or \"auto\"" in result.stderr


@pytest.mark.parametrize("body", [
    'model = "a"\n[digest]\nmodel = "b"\n',
    '[[themes]]\ntitle = "Agents"\nkeywords = ["agent"]\n'
    '[[digest.themes]]\ntitle = "RLHF"\nkeywords = ["reward model"]\n',
    '[profile]\nexclude = ["agent"]\n[digest.profile]\nexclude = ["reward"]\n',
])
def test_a_key_both_at_the_top_and_under_digest_is_a_usage_error(tmp_path, body):
    """One of the two was dropped without a word: a fixed section, a profile's exclude terms
    or a model (a probe, this stop)."""
    from digest.config import load_config
    with pytest.raises(ConfigError, match="both at the top level and under \\[digest\\]"):
        load_config(_toml(tmp_path, body))


def test_config_shows_the_config_files_tables_too(tmp_path):
    """`digest config` left out [limits], [profile] and [[themes]], though the README says it
    prints every effective setting (a probe, stop 31)."""
    path = _toml(tmp_path, '[limits]\nmax_records_per_source = 3\n\n[profile]\nkeywords = '
                           '["agents"]\n\n[[themes]]\ntitle = "Bees"\nkeywords = ["bee"]\n')
    text = CliRunner().invoke(app, ["config", "--config", str(path)])
    assert text.exit_code == 0, text.output
    assert re.search(rf"^limits\.max_records_per_source += 3 +\(file {re.escape(str(path))}\)$",
                     text.output, re.M)
    assert re.search(r"^profile\.keywords += \['agents'\] ", text.output, re.M)
    shown = json.loads(CliRunner().invoke(app, ["config", "--config", str(path), "--json"]).output)
    assert shown["themes"] == {"value": [{"title": "Bees", "keywords": ["bee"]}],
                               "from": f"file {path}"}
    assert shown["limits.max_records_per_source"]["value"] == 3


@pytest.mark.parametrize("where", ["file", "env", "flag"])
def test_a_home_folder_tilde_in_a_path_setting_is_expanded(tmp_path, monkeypatch, where):
    """``state = "~/digest/state.sqlite"`` (as the starter config suggests) made a folder named
    "~" in the folder the run started from, so cron and a mail hook started elsewhere used two
    stores; DIGEST_STATE from a systemd EnvironmentFile, which expands nothing, the same (a
    probe, stop 32)."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    values = {"state": "~/d/state.sqlite", "out": "~/news", "templates": "~/tpl",
              "prompts": "~/prompts"}
    config, environ, flags = tmp_path / "c.toml", {}, {}
    if where == "file":
        config.write_text("".join(f'{k} = "{v}"\n' for k, v in values.items()))
    elif where == "env":
        environ = {"DIGEST_STATE": values["state"]}
        values = {"state": values["state"]}
    else:
        flags = values
    settings = resolve_settings(flags, config if where == "file" else None, environ)
    for name, value in values.items():
        assert str(settings[name]) == str(tmp_path / "home" / value[2:]), name


def test_a_config_file_saved_with_a_byte_order_mark_is_read(tmp_path):
    """A config saved by Notepad (UTF-8 with a BOM) was "not valid TOML (Invalid statement
    (at line 1, column 1))", naming neither the BOM nor the fix (a probe, stop 32); listing
    files with one were read."""
    config = tmp_path / "c.toml"
    config.write_bytes(b"\xef\xbb\xbfmodel = \"gpt-4o-mini\"\n")
    assert resolve_settings({}, config, {})["model"] == "gpt-4o-mini"


def test_a_port_that_is_no_number_is_refused_when_the_settings_are_read(tmp_path):
    """DIGEST_SMTP_PORT=abc was shown by `digest config` with exit 0, where 99999 was exit 2
    and `digest email` refused both (a probe, stop 32)."""
    with pytest.raises(ConfigError, match=r"smtp_port = 'abc': must be a number from 1 to 65535"):
        resolve_settings({}, None, {"DIGEST_SMTP_PORT": "abc"})
    assert resolve_settings({}, None, {"DIGEST_SMTP_PORT": "2525"})["smtp_port"] == "2525"

"""Every setting resolved at once: flag > environment > config file > default, and from where.

``resolve_settings`` is the one function that does it, for ``digest config`` and for library
users; ``Settings.origin(name)`` says where a value came from. Secrets (the API key, the SMTP
password) are read from the environment only and are masked whenever settings are shown.
``starter_config`` is the commented ``digest.toml`` that ``digest init`` writes.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .config import (
    BOUNDS,
    CONFIG_KEYS,
    ENV_KEYS,
    MODEL_TABLES,
    TABLES,
    as_number,
    check_bounds,
    load_config,
)
from .errors import ConfigError, DigestError, OutputUnavailable
from .files import TEMPORARY_ERRNOS
from .home import digest_home
from .links import ARXIV_API
from .redaction import url_for_logs

MASK = "********"


@dataclass(frozen=True)
class Setting:
    """One setting: its name (the config file key), its environment variable, its default."""

    name: str
    default: Any = None
    env: str | None = None
    secret: bool = False
    in_file: bool = True  # False: environment only (secrets, mail addresses)
    note: str = ""


def _defaults() -> dict[str, Any]:
    return {"backend": "auto", "out": "outputs", "state": str(digest_home() / "state.sqlite"),
            "max_themes": 10, "concurrency": 4, "deadline": 900.0,
            "theme_backend": "tfidf", "resolve_ids": False,
            "arxiv_api": ARXIV_API, "batch_api": False, "batch_price_factor": 0.5}


_NOTES = {
    "model": "the backend's default model when not set",
    "timeout": "fitted to the server's speed when not set",
    "model_label": "the model id (a file path: its file name) when not set",
    "context_window": "from the model's card when not set",
    "max_output_tokens": "from the model's card when not set",
    "batch_tokens": "from the context window when not set",
    "prompts": "the shipped prompts when not set",
    "templates": "the shipped templates when not set",
    "embedding_model": "text-embedding-3-small when not set",
}

# Read from the environment only: never from a config file, never shown in clear.
_ENV_ONLY = (
    Setting("api_key", env="OPENAI_API_KEY", secret=True, in_file=False),
    Setting("mail_from", env="DIGEST_MAIL_FROM", in_file=False),
    Setting("mail_to", env="DIGEST_MAIL_TO", in_file=False),
    Setting("smtp_host", env="DIGEST_SMTP_HOST", in_file=False),
    Setting("smtp_port", default=587, env="DIGEST_SMTP_PORT", in_file=False),
    Setting("smtp_user", env="DIGEST_SMTP_USER", in_file=False),
    Setting("smtp_password", env="DIGEST_SMTP_PASSWORD", secret=True, in_file=False),
    Setting("smtp_starttls", default=True, env="DIGEST_SMTP_STARTTLS", in_file=False),
)


# Settings that are paths: a "~" in them is the home folder, as a shell would make it.
PATH_SETTINGS = frozenset({"state", "out", "prompts", "templates"})


def all_settings() -> tuple[Setting, ...]:
    """The table: every config file key (in the order of ``CONFIG_KEYS``), then the
    environment-only ones."""
    defaults = _defaults()
    return tuple(Setting(name, defaults.get(name), ENV_KEYS.get(name), note=_NOTES.get(name, ""))
                 for name in CONFIG_KEYS) + _ENV_ONLY


@dataclass(frozen=True)
class Settings:
    """The effective settings of one run, and where each came from."""

    values: Mapping[str, Any]
    origins: Mapping[str, str]  # "flag", "env NAME", "file PATH" or "default"
    file: Mapping[str, Any]  # the checked config file, with its tables ([[themes]], [limits], …)
    config_path: Path | None = None

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    def origin(self, name: str) -> str:
        return self.origins[name]

    def shown(self) -> dict[str, dict[str, Any]]:
        """Every setting with its origin, secrets masked: what ``digest config --json`` prints."""
        table = {setting.name: setting for setting in all_settings()}
        shown = {name: {"value": _masked(table[name], value), "from": self.origins[name]}
                 for name, value in self.values.items()}
        return shown | self._tables_shown()

    def _tables_shown(self) -> dict[str, dict[str, Any]]:
        """The config file's tables as written ("limits.max_records_per_run"; "themes" for
        the list of sections): what a table leaves out takes its default. No secret is read
        from the file, so none is here."""
        raw = load_config(self.config_path) if self.config_path is not None else {}
        origin = f"file {self.config_path}"
        shown: dict[str, dict[str, Any]] = {}
        for name in (*TABLES, *MODEL_TABLES):
            value = raw.get(name)
            if isinstance(value, Mapping):
                shown |= {f"{name}.{key}": {"value": item, "from": origin}
                          for key, item in value.items()}
            elif value is not None:
                shown[name] = {"value": value, "from": origin}
        return shown

    def lines(self) -> list[str]:
        """What ``digest config`` prints: one aligned line per setting."""
        shown = self.shown()
        width = max(len(name) for name in shown)
        return [f"{name:<{width}} = {_show(row['value']):<40} ({row['from']})"
                for name, row in shown.items()]


def resolve_settings(flags: Mapping[str, Any] | None = None, config_path: Path | None = None,
                     environ: Mapping[str, str] | None = None) -> Settings:
    """Resolve every setting: a flag that is not None wins, then a non-empty environment
    variable, then the config file, then the default."""
    flags = flags or {}
    environ = os.environ if environ is None else environ
    unknown = sorted(set(flags) - {setting.name for setting in all_settings()})
    if unknown:
        raise ConfigError(f"unknown settings {', '.join(unknown)}")
    file = checked_tables(load_config(config_path), config_path)
    values: dict[str, Any] = {}
    origins: dict[str, str] = {}
    for setting in all_settings():
        values[setting.name], origins[setting.name] = _resolve_one(
            setting, flags.get(setting.name), file, environ, config_path)
        if setting.name in PATH_SETTINGS:
            values[setting.name] = _home_expanded(setting.name, values[setting.name],
                                                  origins[setting.name])
    _check_bounds(values, origins)
    _check_sections_fit(values["max_themes"], origins["max_themes"], file, config_path)
    return Settings(values, origins, file, config_path)


def checked_tables(file: Mapping[str, Any], config_path: Path | None) -> dict[str, Any]:
    """The config file with each table checked by the stage that reads it: ``[[themes]]``
    becomes ``Section``s, ``[profile]`` a ``Profile`` (library paths relative to the file),
    ``[limits]``, ``[models]`` and ``[prices]`` are checked and kept as written."""
    if not {"themes", "limits", "profile", "models", "prices"} & set(file):
        return dict(file)
    from .ingest.limits import ingest_limits  # the stages, only when their tables are there
    from .llm.catalog import check_model_tables
    from .relevance import parse_profile
    from .themes import parse_sections

    checked = dict(file)
    where = str(config_path)
    check_model_tables(file, where)
    if "themes" in file:
        checked["themes"] = parse_sections(file["themes"], where)
    if "limits" in file:
        ingest_limits(file, where)
    if "profile" in file:
        checked["profile"] = parse_profile(file["profile"], Path(where))
    return checked


def setting_sources(name: str, flags: Mapping[str, str] | None = None) -> str:
    """Where a setting (or a run option such as ``wait``) is set, for error hints:
    "--model, `model` in the config file or $DIGEST_MODEL". ``flags``: setting name → the
    command-line option that sets it, when there is one."""
    setting = {setting.name: setting for setting in all_settings()}.get(name)
    places = [flags[name]] if flags and name in flags else []
    if setting is not None and setting.in_file:
        places.append(f"`{name}` in the config file")
    if setting is not None and setting.env:
        places.append(f"${setting.env}")
    places = places or [f"`{name}`"]
    return ", ".join(places[:-1]) + (" or " if len(places) > 1 else "") + places[-1]


def _resolve_one(setting: Setting, flag: Any, file: Mapping[str, Any],
                 environ: Mapping[str, str], config_path: Path | None) -> tuple[Any, str]:
    if flag is not None:
        return flag, "flag"
    if setting.env and environ.get(setting.env):
        # An env file with CRLF line ends ("set -a; . ./env") ends every value in "\r"; a key
        # is used (and masked) without the spaces a paste left around it.
        value = environ[setting.env].rstrip("\r\n")
        return (value.strip() if setting.name == "api_key" else value), f"env {setting.env}"
    if setting.in_file and setting.name in file:
        return file[setting.name], f"file {config_path}"
    return setting.default, "default" + (f": {setting.note}" if setting.note else "")


def _home_expanded(name: str, value: Any, origin: str) -> Any:
    """``~/x`` as the home folder's ``x``, wherever the path came from: a config file and a
    systemd EnvironmentFile expand nothing, and a literal "~" folder in whichever folder a
    run starts from would give cron and a mail hook two stores."""
    if not isinstance(value, str | Path) or not str(value).startswith("~"):
        return value
    expanded = os.path.expanduser(str(value))
    if expanded.startswith("~"):
        raise ConfigError(f"{name} = {str(value)!r} ({origin}): its ~ names no home folder "
                          "(HOME is not set, or no such user); give the full path",
                          setting=name)
    return type(value)(expanded)


def _check_bounds(values: Mapping[str, Any], origins: Mapping[str, str]) -> None:
    """A flag or an environment variable takes the bounds the config file does (``load_config``
    checked the file's values, naming the file)."""
    for name in BOUNDS:
        if origins[name] == "flag" or origins[name].startswith("env "):
            check_bounds(name, values[name], name, setting=name)
            if isinstance(values[name], str) and as_number(values[name]) is None:
                raise ConfigError(f"{name} = {values[name]!r}: must be a number "
                                  f"{BOUNDS[name]}", setting=name)



def _check_sections_fit(max_themes: int, origin: str, file: Mapping[str, Any],
                        config_path: Path | None) -> None:
    """Each fixed section is a theme: more of them than ``max_themes`` made an issue of more
    themes than "at most N" (the sections are never dropped: that would hide a configured one)."""
    count = len(file.get("themes", ()))
    if count > max_themes:
        said = f"--max-themes {max_themes}" if origin == "flag" else f"max_themes = {max_themes}"
        said += " (the default)" if origin.startswith("default") else ""
        raise ConfigError(f"{config_path}: {count} [[themes]] sections but {said}: raise "
                          "max_themes or remove sections")


def _masked(setting: Setting, value: Any) -> Any:
    if value is None:
        return None
    if setting.secret:
        return MASK
    if setting.name == "base_url" and isinstance(value, str):
        return url_for_logs(value, keep_user=True, mask=MASK)  # no password, no key
    return value


def _show(value: Any) -> str:
    return "(not set)" if value is None else str(value)


STARTER = '''\
# digest.toml: settings for `digest` (pass it with --config digest.toml).
# Precedence: a command-line flag > an environment variable > this file > the default.
# `digest config --config digest.toml` shows the effective settings and where each came from.
# API keys and the SMTP password are read from the environment only (OPENAI_API_KEY,
# DIGEST_SMTP_PASSWORD), never from this file.

[digest]
# backend = "auto"            # auto, openai or offline (auto: openai when OPENAI_API_KEY or
#                             # OPENAI_BASE_URL is set)
# model = "gpt-4o-mini"       # [env DIGEST_MODEL]
# model_label = "SmolLM2 135M"  # the model's name in the issue [env DIGEST_MODEL_LABEL]
# base_url = "http://localhost:11434/v1"   # an OpenAI-compatible server [env OPENAI_BASE_URL]
# out = "outputs"             # the output folder of `digest newsletter`
# state = "~/.local/share/digest/state.sqlite"   # the state store [env DIGEST_STATE]
# max_themes = 10
# timeout = 300.0             # most seconds one LLM request may take (unset: each request's
#                             # limit is fitted to the server's measured speed)
# concurrency = 4             # LLM calls in parallel
# deadline = 900.0            # seconds the LLM stage may take
# max_cost = 1.0              # USD; past it the rest is summarised offline
# theme_backend = "tfidf"     # or "embeddings"

# Fixed sections every issue should have (optional):
# [[themes]]
# title = "Reward models & RLHF"
# keywords = ["reward model", "RLHF", "preference optimization"]
'''


def starter_config(path: Path) -> Path:
    """Write the commented starter config to ``path``; an existing file is never overwritten."""
    try:
        with open(path, "x", encoding="utf-8") as handle:
            handle.write(STARTER)
    except FileExistsError:
        raise ConfigError(f"{path}: already exists; nothing was written (move it away, or "
                          "edit it)") from None
    except OSError as error:
        what = f"{path}: cannot write ({error.strerror or error}); nothing was written"
        if error.errno in TEMPORARY_ERRNOS:
            raise OutputUnavailable(f"{what}: free space or make the disk writable, then run "
                                    "again") from None
        fix = ("create its folder first, or give another path" if error.errno == errno.ENOENT
               else "give a file's path where you may write")
        raise DigestError(f"{what}: {fix}") from None
    return path

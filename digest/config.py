"""The config file read and its top-level keys checked (``load_config``).

``BOUNDS`` holds the one range of every numeric setting: the command-line options declare it
as their min and max, ``load_config`` checks the file's values against it and
``digest.settings`` a flag's or environment variable's (NaN and infinity are never in range).
Its tables (``[[themes]]``, ``[limits]``, ``[profile]``) are checked by the stages that read
them (``digest.settings`` calls them), so that this module imports no stage.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import ConfigError
from .files import utf8_text
from .home import digest_home
from .tables import TrueFalseOrAuto, check_kind

# Config file keys (TOML, top level or under [digest]) and their types.
CONFIG_KEYS: dict[str, type] = {
    "backend": str, "model": str, "base_url": str, "out": str, "state": str, "format": str,
    "max_themes": int, "context_window": int, "max_output_tokens": int, "batch_tokens": int,
    "timeout": float, "prompts": str, "templates": str,
    "api_version": str, "provider": str, "concurrency": int, "max_cost": float, "max_tokens": int,
    "deadline": float,
    "theme_backend": str, "embedding_model": str, "max_papers": int, "resolve_ids": bool,
    "arxiv_api": str, "model_label": str,
    "batch_api": TrueFalseOrAuto, "batch_price_factor": float,
}
TABLES = ("themes", "limits", "profile")  # also beside a [digest] table
MODEL_TABLES = ("prices", "models")  # [prices."name"], [models."name"]: see digest.llm.catalog
ENV_KEYS = {"model": "DIGEST_MODEL", "state": "DIGEST_STATE", "base_url": "OPENAI_BASE_URL",
            "api_version": "OPENAI_API_VERSION", "model_label": "DIGEST_MODEL_LABEL"}


@dataclass(frozen=True)
class Bounds:
    """The values a numeric setting takes: from ``low`` to ``high`` (None: no limit)."""

    low: float | None = None
    high: float | None = None

    def hold(self, value: float) -> bool:
        return (math.isfinite(value) and (self.low is None or value >= self.low)
                and (self.high is None or value <= self.high))

    def __str__(self) -> str:
        return f"at least {self.low}" if self.high is None else f"from {self.low} to {self.high}"


DAY_S = 86_400  # a longer timeout or deadline overflows the socket and thread waits
BOUNDS: dict[str, Bounds] = {
    "max_themes": Bounds(1, 50), "max_papers": Bounds(1), "concurrency": Bounds(1, 64),
    "timeout": Bounds(0.1, DAY_S), "deadline": Bounds(0.1, DAY_S), "max_cost": Bounds(0),
    "max_tokens": Bounds(1), "context_window": Bounds(1), "max_output_tokens": Bounds(1),
    "batch_tokens": Bounds(1), "batch_price_factor": Bounds(0, 1), "smtp_port": Bounds(1, 65_535),
}
__all__ = ["BOUNDS", "CONFIG_KEYS", "ENV_KEYS", "MODEL_TABLES", "TABLES", "Bounds",
           "check_bounds", "digest_home", "load_config"]


def load_config(path: Path | None) -> dict[str, Any]:
    """The config file's settings (a ``[digest]`` table is read as the top level) with its
    tables as written: ``digest.settings.resolve_settings`` has each stage check its own."""
    if path is None:
        return {}
    try:
        data = tomllib.loads(_read(Path(path)))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from None
    if "digest" in data:  # the tables ([limits], [prices."m"], …) beside a [digest] table
        if not isinstance(data["digest"], dict):
            raise ConfigError(f"{path}: [digest] must be a table: a line [digest], then its "
                              "keys, one a line (model = \"...\")")
        twice = sorted(set(data["digest"]) & set(data))
        if twice:
            raise ConfigError(f"{path}: {', '.join(twice)} both at the top level and under "
                              "[digest]: keep one (one of them would be ignored)")
        data = {**data["digest"], **{k: v for k, v in data.items() if k != "digest"}}
    unknown = sorted(set(data) - set(CONFIG_KEYS) - {*TABLES, *MODEL_TABLES})
    if unknown:
        raise ConfigError(f"{path}: unknown keys {', '.join(unknown)}; known keys are "
                          f"{', '.join(sorted(CONFIG_KEYS))}")
    for key, kind in CONFIG_KEYS.items():
        if key in data:
            check_kind(data[key], kind, f"{path}: '{key}'")
            check_bounds(key, data[key], f"{path}: '{key}'")
    return data


def check_bounds(name: str, value: Any, where: str, *, setting: str | None = None) -> None:
    """A ``ConfigError`` "WHERE = VALUE: must be from 1 to 64" unless ``value`` (a number, or
    an environment variable's text) is within the bounds of setting ``name``. What is no number
    at all is left to the stage that reads it, which says what it expects."""
    bounds = BOUNDS.get(name)
    number = as_number(value)
    if bounds is not None and number is not None and not bounds.hold(number):
        finite = "" if math.isfinite(number) else "a finite number "
        raise ConfigError(f"{where} = {value!r}: must be {finite}{bounds}", setting=setting)


def as_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        return None


def _read(path: Path) -> str:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"config file {path}: no such file") from None
    except IsADirectoryError:
        raise ConfigError(f"config file {path}: a folder, not a file (name the TOML file "
                          "itself)") from None
    except OSError as error:
        raise ConfigError(f"config file {path}: cannot read ({error.strerror or error})"
                          ) from None
    return utf8_text(data.removeprefix(b"\xef\xbb\xbf"), str(path), ConfigError)  # Notepad's BOM

"""Settings, resolved in one place: flag > environment > config file > default."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .errors import ConfigError
from .themes import parse_sections

# Config file keys (TOML, top level or under [digest]) and their types.
CONFIG_KEYS: dict[str, type] = {
    "backend": str, "model": str, "base_url": str, "out": str, "state": str, "format": str,
    "max_themes": int, "context_window": int, "max_output_tokens": int, "batch_tokens": int,
    "timeout": float, "prompts": str, "templates": str,
    "api_version": str, "provider": str, "concurrency": int, "max_cost": float, "max_tokens": int,
    "deadline": float,
    "theme_backend": str, "embedding_model": str, "max_papers": int, "resolve_ids": bool,
    "arxiv_api": str, "model_label": str,
}
TABLES = ("themes", "limits", "profile")  # also beside a [digest] table
KIND_NAMES = {str: "a string", int: "an integer", float: "a number"}
ENV_KEYS = {"model": "DIGEST_MODEL", "state": "DIGEST_STATE", "base_url": "OPENAI_BASE_URL",
            "api_version": "OPENAI_API_VERSION", "model_label": "DIGEST_MODEL_LABEL"}


def digest_home() -> Path:
    """Where digest keeps its state by default: $DIGEST_HOME, else the XDG data folder."""
    if os.environ.get("DIGEST_HOME"):
        return Path(os.environ["DIGEST_HOME"])
    data_home = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data_home) / "digest"


def load_config(path: Path | None) -> dict[str, Any]:
    if path is None:
        return {}
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"--config {path}: no such file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from None
    if "digest" in data:  # [[themes]], [limits] and [profile] beside a [digest] table
        data = {**data["digest"], **{k: data[k] for k in TABLES if k in data}}
    unknown = sorted(set(data) - set(CONFIG_KEYS) - {*TABLES, "prices", "models"})
    if unknown:
        raise ConfigError(f"{path}: unknown keys {', '.join(unknown)}; known keys are "
                          f"{', '.join(sorted(CONFIG_KEYS))}")
    for key, kind in CONFIG_KEYS.items():
        if key in data and not isinstance(data[key], kind if kind is not float else (int, float)):
            raise ConfigError(f"{path}: '{key}' must be {KIND_NAMES[kind]}")
    if "themes" in data:
        data["themes"] = parse_sections(data["themes"], str(path))
    if "limits" in data:
        from .ingest.limits import ingest_limits  # checked now; the run reads it again
        ingest_limits(data, str(path))
    if "profile" in data:
        from .relevance import parse_profile  # library paths are relative to the config file
        data["profile"] = parse_profile(data["profile"], Path(path))
    return data


def resolve(name: str, flag: Any, config: Mapping[str, Any], default: Any = None) -> Any:
    """The value of one setting: the flag if given, else env, else config file, else default."""
    if flag is not None:
        return flag
    env_name = ENV_KEYS.get(name)
    if env_name and os.environ.get(env_name):
        return os.environ[env_name]
    return config.get(name, default)

"""The reader's profile: the ``[profile]`` table of the config file, checked."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..tables import check_table

PROFILE_KEYS = ("library", "keywords", "exclude", "authors")
_EXAMPLE = {
    "library": 'library = ["liked.json", "~/zotero-export.bib"]',
    "keywords": 'keywords = ["world model", "sim-to-real"]',
    "exclude": 'exclude = ["survey"]',
    "authors": 'authors = ["Chelsea Finn"]',
}
MAX_TERM_CHARS = 200


@dataclass(frozen=True)
class Profile:
    """What one reader wants: papers like those in ``library``, about ``keywords``, by
    ``authors``, and nothing whose title matches ``exclude``. Every part is optional."""

    library: tuple[Path, ...] = ()
    keywords: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    authors: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.library or self.keywords or self.exclude or self.authors)


def parse_profile(table: Any, config_path: str | Path) -> Profile:
    """The ``[profile]`` table as a ``Profile``; library paths are made absolute against
    the config file's folder after ``~`` is expanded. Raises ``ConfigError`` naming the
    file, the key and the fix."""
    where = f"{config_path}: [profile]"
    table = check_table(table, PROFILE_KEYS, where,
                        example=f"[profile] then {_EXAMPLE['keywords']}")
    lists = {key: _strings(table.get(key, []), key, where) for key in PROFILE_KEYS}
    base = Path(config_path).expanduser().resolve().parent
    return Profile(library=tuple(_library_path(p, base) for p in lists["library"]),
                   keywords=lists["keywords"], exclude=lists["exclude"],
                   authors=lists["authors"])


def _strings(value: Any, key: str, where: str) -> tuple[str, ...]:
    """A list of non-empty strings, kept in order, duplicates (ignoring case) dropped."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where} '{key}' must be a list of strings, e.g. {_EXAMPLE[key]}")
    seen: dict[str, str] = {}
    for item in (" ".join(v.split()) for v in value):
        if not item:
            raise ConfigError(f"{where} '{key}' holds an empty string; remove it")
        if len(item) > MAX_TERM_CHARS:
            raise ConfigError(f"{where} '{key}' holds an entry of {len(item)} characters; "
                              f"keep each under {MAX_TERM_CHARS}")
        seen.setdefault(item.casefold(), item)
    return tuple(seen.values())


def _library_path(text: str, base: Path) -> Path:
    path = Path(text).expanduser()
    return path if path.is_absolute() else base / path

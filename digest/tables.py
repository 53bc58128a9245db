"""The checks every table of the config file shares: a table, known keys, values of a kind.

Each stage checks its own table with these (``[limits]`` in ``digest.ingest.limits``,
``[profile]`` in ``digest.relevance``, ``[[themes]]`` in ``digest.themes``); the errors name
the file, the table and the fix.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .errors import ConfigError


class TrueFalseOrAuto:
    """The kind of a switch with a third state (``batch_api``): true, false or "auto", as a
    boolean or as a string ("true", "False", " auto ")."""

    WORDS = ("true", "false", "auto")


KIND_NAMES: dict[type, str] = {str: "a string", int: "an integer", float: "a number",
                               bool: "true or false", TrueFalseOrAuto: 'true, false or "auto"'}


def check_table(table: Any, known: Iterable[str], where: str, example: str = ""
                ) -> Mapping[str, Any]:
    """``table`` as a mapping whose keys are all in ``known``; else a ``ConfigError`` that
    starts with ``where`` (e.g. "digest.toml: [limits]")."""
    if not isinstance(table, Mapping):
        raise ConfigError(f"{where} must be a table" + (f", e.g. {example}" if example else ""))
    known = list(known)
    unknown = sorted(set(table) - set(known))
    if unknown:
        raise ConfigError(f"{where}: unknown keys {', '.join(unknown)}; known keys are "
                          f"{', '.join(known)}")
    return table


def is_kind(value: Any, kind: type) -> bool:
    """Whether ``value`` is of ``kind`` as TOML means it: an integer is a number too, but
    true and false are not numbers."""
    if kind is bool:
        return isinstance(value, bool)
    if kind is TrueFalseOrAuto:
        return isinstance(value, bool) or (isinstance(value, str)
                                           and value.strip().lower() in TrueFalseOrAuto.WORDS)
    if isinstance(value, bool):
        return False
    return isinstance(value, (int, float) if kind is float else kind)


def check_kind(value: Any, kind: type, where: str) -> None:
    """A ``ConfigError`` "WHERE must be an integer" unless ``value`` is of ``kind``."""
    if not is_kind(value, kind):
        raise ConfigError(f"{where} must be {KIND_NAMES[kind]}")

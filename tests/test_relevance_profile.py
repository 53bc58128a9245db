"""The [profile] table of the config file."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from digest.errors import ConfigError
from digest.relevance import Profile, parse_profile

ISSUE_EXAMPLE = """
[profile]
library = ["liked.json", "~/zotero-export.bib"]
keywords = ["world model", "sim-to-real"]
exclude = ["survey"]
authors = ["Chelsea Finn"]
"""


def test_the_issue_example_parses_with_paths_relative_to_the_config(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    config = tmp_path / "conf" / "digest.toml"
    profile = parse_profile(tomllib.loads(ISSUE_EXAMPLE)["profile"], config)
    assert profile == Profile(
        library=(tmp_path / "conf" / "liked.json", tmp_path / "home" / "zotero-export.bib"),
        keywords=("world model", "sim-to-real"), exclude=("survey",), authors=("Chelsea Finn",))


def test_every_key_is_optional_and_an_empty_profile_is_false() -> None:
    assert not parse_profile({}, "c.toml")
    assert parse_profile({"keywords": ["x"]}, "c.toml") == Profile(keywords=("x",))


def test_whitespace_is_tidied_and_repeats_dropped() -> None:
    profile = parse_profile({"keywords": [" world   model ", "World Model", "RL"]}, "c.toml")
    assert profile.keywords == ("world model", "RL")


@pytest.mark.parametrize("table, expected", [
    ({"keyword": ["x"]}, "c.toml: [profile]: unknown keys keyword; known keys are library, "
                         "keywords, exclude, authors"),
    ({"keywords": "world model"}, None),  # one string is taken as a list of one
    ({"keywords": [1, 2]}, "c.toml: [profile] 'keywords' must be a list of strings, "
                           'e.g. keywords = ["world model", "sim-to-real"]'),
    ({"authors": {"name": "x"}}, "c.toml: [profile] 'authors' must be a list of strings"),
    ({"exclude": ["survey", "  "]}, "c.toml: [profile] 'exclude' holds an empty string"),
    ({"library": ["x" * 300]}, "c.toml: [profile] 'library' holds an entry of 300 characters"),
    ("not a table", "c.toml: [profile] must be a table"),
])
def test_bad_tables_name_the_file_the_key_and_the_fix(table: object, expected: str | None
                                                      ) -> None:
    if expected is None:
        assert parse_profile(table, "c.toml").keywords == ("world model",)
        return
    with pytest.raises(ConfigError) as caught:
        parse_profile(table, "c.toml")
    assert str(caught.value).startswith(expected)

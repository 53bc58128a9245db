"""The README's relevance example runs as written, on its own [profile] table."""

from __future__ import annotations

import json
import re
import shutil
import tomllib
from pathlib import Path

import pytest

from digest.dedup import deduplicate
from digest.ingest import load_sources

ROOT = Path(__file__).parent.parent
SECTION = (ROOT / "README.md").read_text(encoding="utf-8").split("## Relevance", 1)[1]
SECTION = SECTION.split("\n## ", 1)[0]


def test_the_readme_profile_and_example_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            seeds: Path) -> None:
    toml_block = re.search(r"```toml\n(.*?)```", SECTION, re.S)
    python_block = re.search(r"```python\n(.*?)```", SECTION, re.S)
    assert toml_block and python_block
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "liked.json").write_text(json.dumps(
        [{"title": "Learning world models for robots", "abstract": "World models help."}]))
    shutil.copy(ROOT / "tests" / "fixtures" / "relevance" / "library.bib",
                tmp_path / "zotero-export.bib")
    papers = deduplicate(load_sources([str(seeds)]).records).papers
    scope = {"config": tomllib.loads(toml_block.group(1)), "papers": papers, "paper": papers[0]}
    exec(compile(python_block.group(1), "README.md", "exec"), scope)  # noqa: S102
    assert len(scope["top"]) == 30 and len(scope["rest"]) + 30 + \
        len(scope["ranking"].excluded) == len(papers)
    assert scope["ranking"].method == "learned"
    assert any(r.reasons for r in scope["top"])

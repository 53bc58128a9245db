"""ARCHITECTURE.md is the current design: it names every module, and each one it names exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parent.parent
TEXT = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")


def _named_paths() -> set[str]:
    return set(re.findall(r"`(digest/[\w/]+(?:\.py)?)`", TEXT))


def _submodules_named(package: str) -> set[str]:
    listing = re.search(rf"`digest/{package}/` \(([^)]*)\)", TEXT)
    return set(re.findall(r"`(\w+)`", listing.group(1))) if listing else set()


def test_every_module_named_exists():
    missing = sorted(path for path in _named_paths() if not (ROOT / path).exists())
    assert not missing, f"ARCHITECTURE.md names modules that do not exist: {missing}"


def test_every_top_level_module_is_named():
    named = _named_paths()
    modules = [f"digest/{p.name}" for p in (ROOT / "digest").glob("*.py")]
    packages = [f"digest/{p.name}/" for p in (ROOT / "digest").iterdir()
                if p.is_dir() and (p / "__init__.py").exists()]
    unnamed = sorted(m for m in modules if m not in named)
    unnamed += sorted(p for p in packages if p not in named)
    assert not unnamed, f"ARCHITECTURE.md does not say what these are for: {unnamed}"


def test_every_submodule_of_a_package_is_listed():
    for package in ("ingest", "dedup", "relevance", "themes", "llm", "render"):
        files = {p.stem for p in (ROOT / "digest" / package).glob("*.py")} - {"__init__"}
        listed = _submodules_named(package)
        assert files == listed, f"digest/{package}/: modules {sorted(files ^ listed)} differ"

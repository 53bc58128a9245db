"""Start-up stays light: the CLI loads no heavy package until a command needs it (issue 15
point 4, issue 16 point 4). The speed target itself is in benchmarks/bench_startup.py."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parent.parent
HEAVY = ("sklearn", "scipy", "numpy", "openai", "tiktoken")


def _loaded_after(statement: str) -> set[str]:
    code = f"{statement}; import sys; print(' '.join(sorted(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=ROOT, timeout=120, check=True)
    return set(result.stdout.split())


def test_importing_the_cli_loads_no_heavy_package():
    loaded = _loaded_after("import digest.cli")
    assert "digest.cli" in loaded
    assert not {name for name in HEAVY if name in loaded}


def test_importing_the_cli_or_the_package_loads_no_stage():
    """`digest --version`, `--help` and the mail hook pay for no stage they do not run."""
    stages = {"digest.jobs", "digest.pipeline", "digest.ingest", "digest.dedup", "digest.themes",
              "digest.summarize", "digest.render", "jinja2"}
    assert not stages & _loaded_after("import digest.cli")
    assert "digest.run" in _loaded_after("import digest; digest.Digest")  # loads on use
    assert "digest.pipeline" in _loaded_after("import digest; digest.build_issue")


def test_the_heavy_packages_still_load_where_they_are_used():
    """The check above can fail: the same probe sees them once a stage is used."""
    loaded = _loaded_after("import digest.themes as t; t.TfidfThemes; "
                           "from digest.tokens import TokenCounter; TokenCounter(); "
                           "from digest.relevance import _similarity as s; s._tfidf(['a b'])")
    assert {"sklearn", "numpy", "scipy", "tiktoken"} <= loaded


def _imports(path: Path) -> set[str]:
    """The digest modules ``path`` imports at any depth (relative imports made absolute)."""
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            found.add(f"{base}.{node.module}" if node.level and node.module else
                      base if node.level else node.module or "")
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith("digest")}


def test_no_sideways_imports():
    """config reads the file and imports no stage; chunk does not know the LLM package;
    ingest does not reach up into config."""
    assert not {m for m in _imports(ROOT / "digest/config.py")
                if m.startswith(("digest.themes", "digest.ingest", "digest.relevance"))}
    assert not {m for m in _imports(ROOT / "digest/chunk.py") if m.startswith("digest.llm")}
    for module in (ROOT / "digest/ingest").glob("*.py"):
        assert "digest.config" not in _imports(module), module.name

"""The README's local-server recipes, run as written against the fake server behaving as each
server is documented to (which response formats it refuses, and how).

Each recipe's `digest` command and its TOML are read from the README's "Local model servers"
section, so a recipe that stops working fails here. llama-cpp-python also runs for real in
``make e2e-local`` (tests/e2e_local).
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from digest.cli import app

from .conftest import EXAMPLES, ROOT
from .fake_openai import FakeOpenAI, server_like

README = (ROOT / "README.md").read_text(encoding="utf-8")
SECTION = README.split("### Local model servers", 1)[1].split("\n### ", 1)[0]
RECIPES = {block.split("\n", 1)[0].strip(): block for block in SECTION.split("\n#### ")[1:]}

# recipe heading → (how the fake behaves, the formats digest ends up sending)
SERVERS = {
    "llama.cpp: llama-cpp-python": ("llama-cpp-python", {"json_object+schema"}),
    "llama.cpp: `llama-server`": ("llama-server", {"json_schema"}),
    "Ollama": ("ollama", {"json_schema"}),
    "vLLM": ("vllm", {"json_schema"}),
    "LM Studio": ("lm-studio", {"json_schema"}),
}


def _recipe(heading: str) -> tuple[list[str], str]:
    """The recipe's digest command (without `digest`) and its TOML config."""
    block = RECIPES[heading]
    command = next(line for line in block.splitlines() if line.startswith("digest "))
    toml = re.search(r"```toml\n(.*?)```", block, re.DOTALL)
    assert toml, f"{heading}: no TOML config"
    return shlex.split(command)[1:], toml[1]


def test_every_server_has_a_recipe():
    assert set(RECIPES) == set(SERVERS)


@pytest.mark.parametrize("heading", sorted(SERVERS))
def test_the_readme_recipe_works_against_the_server_as_it_behaves(tmp_path: Path, heading):
    behaviour, settled = SERVERS[heading]
    args, toml = _recipe(heading)
    config = tmp_path / "digest.toml"
    config.write_text(toml, encoding="utf-8")
    with FakeOpenAI(responder=server_like(behaviour)) as server:
        args = [str(EXAMPLES) if arg == "listings/" else str(config) if arg == "digest.toml"
                else arg for arg in args]
        args[args.index("--base-url") + 1] = server.url
        result = CliRunner().invoke(app, [
            *args, "--week", "2026-W47", "--out", str(tmp_path / "out"),
            "--state", str(tmp_path / "s.sqlite"), "--report", str(tmp_path / "r.json")])
        sent = server.sent_formats()
    assert result.exit_code == 0, result.output
    llm = json.loads((tmp_path / "r.json").read_text())["llm"]
    assert llm["calls"] > 0 and llm["stopped"] is None and not llm["fallback_themes"]
    assert llm["retries"] == 0 and llm["failed_calls"] == 0
    refused = [kind for kind in sent if kind not in settled]
    # each call answered in the settled format; before it, at most one refusal per call out
    assert len(refused) <= 4 and len(sent) == llm["calls"] + len(refused)
    issue = (tmp_path / "out" / "2026-W47.md").read_text(encoding="utf-8")
    model = args[args.index("--model") + 1]
    label = args[args.index("--model-label") + 1] if "--model-label" in args else model
    assert f"({label})" in issue


def test_an_old_llama_server_that_refuses_json_schema_is_stepped_down_at_once(tmp_path):
    args, toml = _recipe("llama.cpp: `llama-server`")
    config = tmp_path / "digest.toml"
    config.write_text(toml, encoding="utf-8")
    with FakeOpenAI(responder=server_like("old-llama-server")) as server:
        args = [str(EXAMPLES) if arg == "listings/" else str(config) if arg == "digest.toml"
                else arg for arg in args]
        args[args.index("--base-url") + 1] = server.url
        result = CliRunner().invoke(app, [*args, "--week", "2026-W47", "--out",
                                          str(tmp_path / "out"), "--state",
                                          str(tmp_path / "s.sqlite")])
        sent = server.sent_formats()
    assert result.exit_code == 0, result.output
    assert 1 <= sent.count("json_schema") <= 2  # --concurrency 2: at most two out at once
    assert {kind for kind in sent if kind != "json_schema"} == {"json_object+schema"}

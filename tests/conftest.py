"""Shared fixtures. Every test runs with its own digest home and no LLM credentials."""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

# The real-server test needs a llama.cpp build: `make e2e-local` collects it, `make test` never.
collect_ignore = [] if os.environ.get("DIGEST_E2E_PYTHON") else ["e2e_local"]

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
SEEDS = ROOT.parent / "shared" / "seeds"
SHARED_DATA = ROOT.parent / "shared" / "data"


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No test reads the developer's keys, state or config."""
    home = tmp_path / "digest-home"
    monkeypatch.setenv("DIGEST_HOME", str(home))
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_VERSION", "DIGEST_MODEL",
                 "DIGEST_STATE", "DIGEST_MODEL_LABEL", "DIGEST_RAISE_ERRORS",
                 "DIGEST_MAIL_FROM", "DIGEST_MAIL_TO",
                 "DIGEST_SMTP_HOST", "DIGEST_SMTP_PORT", "DIGEST_SMTP_USER",
                 "DIGEST_SMTP_PASSWORD", "DIGEST_SMTP_STARTTLS", "XDG_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)
    return home


def pytest_report_header() -> list[str]:
    if SEEDS.is_dir() and SHARED_DATA.is_dir():
        return []
    return [f"{ROOT.parent / 'shared'} is missing: the tests that read the seeds and the arXiv "
            "sample will fail (CI and developers keep ../shared beside the checkout)"]


@pytest.fixture
def seeds() -> Path:
    if not SEEDS.is_dir():
        pytest.fail(f"{SEEDS} is missing: CI and developers keep ../shared beside the checkout")
    return SEEDS


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 256 KiB tmpfs: fill it for a full disk, remount it read-only; always unmounted."""
    disk = tmp_path / "disk"
    disk.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(disk)], check=True)
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def remount_read_only(disk: Path) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)


@contextmanager
def served(handler: type[BaseHTTPRequestHandler], host: str = "127.0.0.1") -> Iterator[str]:
    """``handler`` served on ``host`` (a loopback address) in a thread: its base URL, and the
    server shut down and joined afterwards."""
    httpd = ThreadingHTTPServer((host, 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield f"http://{host}:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)

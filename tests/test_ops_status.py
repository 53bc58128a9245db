# ruff: noqa: F811 - pytest fixtures imported from tests.test_mail are parameters here
"""What operators see (issue 11, point 7): `digest status` and `digest history`."""

from __future__ import annotations

import json

from tests.conftest import EXAMPLES
from tests.opsrun import cli, kill9, start_paused, week_listing
from tests.test_mail import Recorder, mail_env, smtp_server  # noqa: F401 - fixtures


def test_status_and_history_show_lock_pending_issues_and_sendings(mail_env, smtp_server,
                                                                  tmp_path):
    state, out = tmp_path / "state.sqlite", tmp_path / "out"
    args = ["--state", str(state), "--out", str(out), "--backend", "offline"]
    assert cli("ingest", "-", "--state", str(state),
               stdin=week_listing(tmp_path, "2026-W47", 5).read_text()).returncode == 0
    held = start_paused(tmp_path, "files", "newsletter", str(EXAMPLES), "--week", "2026-W47",
                        *args)
    try:
        during = json.loads(cli("status", "--state", str(state), "--json").stdout)
    finally:
        kill9(held)
    assert during["lock_holder"]["pid"] == held.pid
    assert during["lock_holder"]["week"] == "2026-W47"
    assert during["pending"] == ["2026-W47"] and during["last_issue"] is None
    assert during["inbox"] == 5

    text = cli("status", "--state", str(state)).stdout
    assert "run lock:     free" in text and "pending:      2026-W47" in text

    server = smtp_server(Recorder())
    assert cli("email", str(EXAMPLES), "--week", "2026-W47", "--backend", "offline", "--state",
               str(state), "--smtp-host", "127.0.0.1", "--smtp-port",
               str(server.port)).returncode == 0
    after = json.loads(cli("status", "--state", str(state), "--json").stdout)
    assert after["pending"] == [] and after["last_issue"]["week"] == "2026-W47"
    assert after["last_issue"]["papers"] == 35 and after["next_week"] == "2026-W48"
    assert after["last_sending"]["answer"] == "250 Message accepted"
    assert after["inbox"] == 0  # the finished issue took the mail's records

    rows = json.loads(cli("history", "--state", str(state), "--json").stdout)
    assert [(r["week"], r["papers"], r["files"]) for r in rows] == [
        ("2026-W47", 35, ["2026-W47.md"])]
    assert rows[0]["sent"][0]["recipients"] == ["team@example.org", "lab@example.org"]
    line = cli("history", "--state", str(state)).stdout
    assert line.startswith("2026-W47    35 papers  2026-W47.md  at ") and "team@" in line


def test_status_of_a_store_that_is_not_there_says_so(tmp_path):
    result = cli("status", "--state", str(tmp_path / "typo.sqlite"))
    assert result.returncode == 1 and "no state store here yet" in result.stderr
    assert not (tmp_path / "typo.sqlite").exists()

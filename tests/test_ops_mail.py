# ruff: noqa: F811 - pytest fixtures imported from tests.test_mail are parameters here
"""Mail sent once (issue 11, point 6), against a real SMTP server on 127.0.0.1."""

from __future__ import annotations

import json
import shutil
import sqlite3
from contextlib import suppress
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES
from tests.opsrun import cli, kill9, pending_weeks, run_process, start_paused
from tests.test_mail import Recorder, mail_env, smtp_server  # noqa: F401 - fixtures


def send(state: Path, port: int, *extra: str):  # type: ignore[no-untyped-def]
    return cli("email", str(EXAMPLES), "--week", "2026-W47", "--backend", "offline",
               "--state", str(state), "--smtp-host", "127.0.0.1", "--smtp-port", str(port),
               *extra)


def sendings(state: Path) -> list[tuple[str, str | None, str | None]]:
    with sqlite3.connect(state) as db:
        return db.execute("SELECT week, sent_at, answer FROM sendings ORDER BY id").fetchall()


def test_the_cron_line_run_twice_sends_once_and_resend_sends_again(mail_env, smtp_server,
                                                                   tmp_path):
    handler = Recorder()
    server = smtp_server(handler)
    state = tmp_path / "state.sqlite"
    first = send(state, server.port)
    assert first.returncode == 0, first.stderr
    assert "250 Message accepted" in first.stdout
    again = send(state, server.port)
    assert again.returncode == 0, again.stderr
    assert "already sent to team@example.org, lab@example.org" in again.stdout
    assert len(handler.messages) == 1
    assert send(state, server.port, "--resend").returncode == 0
    assert len(handler.messages) == 2
    assert [(week, answer) for week, _, answer in sendings(state)] == [
        ("2026-W47", "250 Message accepted")] * 2


def test_a_deferred_mail_is_not_recorded_so_the_retry_sends_it(mail_env, smtp_server, tmp_path):
    state = tmp_path / "state.sqlite"
    deferring = smtp_server(Recorder(rcpt_answer="451 4.3.0 try later"))
    assert send(state, deferring.port).returncode == 75
    assert sendings(state) == []
    handler = Recorder()
    assert send(state, smtp_server(handler).port).returncode == 0
    assert len(handler.messages) == 1


def recipients_sent(state: Path) -> list[list[str]]:
    with sqlite3.connect(state) as db:
        return [json.loads(rcpt) for rcpt, in db.execute(
            "SELECT recipients FROM sendings WHERE sent_at IS NOT NULL ORDER BY id")]


@pytest.mark.parametrize(("answer", "code"), [("451 4.2.1 mailbox busy", 75),
                                              ("550 5.1.1 no such user", 1)])
def test_a_recipient_the_server_turns_away_is_not_recorded_as_sent_and_the_rerun_sends_only_to_them(
        mail_env, smtp_server, tmp_path, answer, code):
    """A recipient deferred (4xx) or refused (5xx) at RCPT while another was accepted was
    recorded as sent: exit 0, "sent ... to team@example.org, lab@example.org", a warning
    only, no error in the report, and a rerun said "already sent" (a probe). Now the
    sending records the recipients the server took, the run exits 75 (a deferral: retry)
    or 1 (refused for good) naming the others and the answers, and a rerun sends to those
    only: everyone gets the issue once."""
    state, report = tmp_path / "state.sqlite", tmp_path / "report.json"
    busy = Recorder(answers={"lab@example.org": answer})
    first = send(state, smtp_server(busy).port, "--report", str(report))
    assert first.returncode == code, first.stderr
    assert f"lab@example.org: {answer}" in first.stderr and "team@example.org" in first.stderr
    assert busy.envelopes == [("digest@example.org", ["team@example.org"])]
    assert recipients_sent(state) == [["team@example.org"]]
    errors = json.loads(report.read_text())["errors"]
    assert len(errors) == 1 and f"lab@example.org: {answer}" in errors[0]
    status = json.loads(cli("status", "--state", str(state), "--json").stdout)
    assert status["last_sending"]["recipients"] == ["team@example.org"]

    willing = Recorder()
    retry = send(state, smtp_server(willing).port)
    assert retry.returncode == 0, retry.stderr
    assert "to lab@example.org (250" in retry.stdout and "team@" not in retry.stdout
    assert willing.envelopes == [("digest@example.org", ["lab@example.org"])]
    again = send(state, smtp_server(willing).port)
    assert again.returncode == 0, again.stderr
    assert "already sent to team@example.org, lab@example.org" in again.stdout
    assert len(willing.envelopes) == 1


@pytest.mark.parametrize("second", ["team@example.org", "The Team <TEAM@Example.ORG>"])
def test_a_recipient_written_another_way_is_not_sent_the_week_twice(
        mail_env, smtp_server, monkeypatch, tmp_path, second):
    """"Team <team@example.org>" was sent the week, then `DIGEST_MAIL_TO=team@example.org` sent
    it again: "sent once" compared the whole address, name and case included (a probe, this
    stop). A recipient is its mailbox."""
    state, handler = tmp_path / "state.sqlite", Recorder()
    server = smtp_server(handler)
    monkeypatch.setenv("DIGEST_MAIL_TO", "Team <team@example.org>")
    assert send(state, server.port).returncode == 0
    monkeypatch.setenv("DIGEST_MAIL_TO", second)
    again = send(state, server.port)
    assert again.returncode == 0, again.stderr
    assert "already sent" in again.stdout
    assert len(handler.envelopes) == 1


def test_a_server_without_auth_is_a_configuration_error_not_a_retry(mail_env, smtp_server,
                                                                    monkeypatch, tmp_path):
    server = smtp_server(Recorder())  # offers no AUTH
    monkeypatch.setenv("DIGEST_SMTP_USER", "digest")
    monkeypatch.setenv("DIGEST_SMTP_PASSWORD", "pw")
    result = send(tmp_path / "state.sqlite", server.port)
    assert result.returncode == 1, result.stderr
    assert "offers no login (AUTH)" in result.stderr and "pw" not in result.stderr.split()


def test_killed_before_the_server_confirmed_the_next_run_does_not_send_blindly(
        mail_env, smtp_server, tmp_path):
    handler = Recorder()
    server = smtp_server(handler)
    state = tmp_path / "state.sqlite"
    run = start_paused(tmp_path, "sending", "email", str(EXAMPLES), "--week", "2026-W47",
                       "--backend", "offline", "--state", str(state), "--smtp-host",
                       "127.0.0.1", "--smtp-port", str(server.port))
    kill9(run)
    unsure = send(state, server.port)
    assert unsure.returncode == 1 and "interrupted before the server confirmed" in unsure.stderr
    assert handler.messages == []
    assert send(state, server.port, "--resend").returncode == 0
    assert len(handler.messages) == 1


def test_eml_with_a_state_store_takes_the_run_lock_like_any_email_run(mail_env, tmp_path):
    """While a newsletter held the store's run lock, `digest email --state ... --eml`
    exited 0 and wrote the message: --eml took no lock (a probe, this stop). The README
    says a second run exits 75 at once naming the holder; --wait waits."""
    state, out = tmp_path / "state.sqlite", tmp_path / "out"
    common = [str(EXAMPLES), "--week", "2026-W47", "--backend", "offline", "--state", str(state)]
    holder = start_paused(tmp_path, "locked", "newsletter", *common, "--out", str(out))
    try:
        busy = cli("email", *common, "--eml")
        waited = cli("email", *common, "--eml", "--wait", "0.5")
    finally:
        kill9(holder)
    for result in (busy, waited):
        assert result.returncode == 75, result.stderr
        assert f"pid {holder.pid} (newsletter, week 2026-W47, since " in result.stderr
        assert result.stdout == ""
    assert "after waiting 0.5 s" in waited.stderr
    freed = cli("email", *common, "--eml", "--wait", "5")
    assert freed.returncode == 0, freed.stderr
    assert freed.stdout.startswith("Subject: Research digest, 2026-W47")


def test_eml_with_a_state_store_finishes_an_issue_left_pending_before_building_the_mail(
        mail_env, tmp_path):
    """--eml skipped finishing the issue a killed newsletter left pending, so it built a
    message the store did not yet know as that week's issue (a probe, this stop). Like
    every run with the store, it finishes the pending issue first, then mails that issue."""
    state, out = tmp_path / "state.sqlite", tmp_path / "out"
    common = [str(EXAMPLES), "--week", "2026-W47", "--backend", "offline", "--state", str(state)]
    kill9(start_paused(tmp_path, "pending", "newsletter", *common, "--out", str(out)))
    assert pending_weeks(state) == ["2026-W47"]
    mailed = cli("email", *common, "--eml")
    assert mailed.returncode == 0, mailed.stderr
    assert pending_weeks(state) == [] and (out / "2026-W47.md").exists()
    assert sendings(state) == []  # --eml mails nothing itself: no sending is recorded


def test_no_smtp_server_is_a_usage_error_that_records_no_sending_and_blocks_no_later_run(
        mail_env, smtp_server, monkeypatch, tmp_path):
    """Without DIGEST_SMTP_HOST the run exited 2 "no SMTP server to send through" but left
    the sending recorded UNCONFIRMED, so every later run, even with a working --smtp-host,
    exited 1 "was interrupted before the server confirmed it ... resend" (a probe, this
    stop). Now the settings are checked before the sending is recorded."""
    state = tmp_path / "state.sqlite"
    failed = cli("email", str(EXAMPLES), "--week", "2026-W47", "--backend", "offline",
                 "--state", str(state))
    assert failed.returncode == 2, failed.stderr
    assert "no SMTP server" in failed.stderr and "--smtp-host" in failed.stderr
    assert not state.exists() or sendings(state) == []
    handler = Recorder()
    retry = send(state, smtp_server(handler).port)
    assert retry.returncode == 0, retry.stderr
    assert len(handler.messages) == 1


@pytest.mark.parametrize("host", ["smtp..example.org", "smtp.example.org:587", "smtp example.org",
                                  "x" * 64 + ".example.org"])
def test_a_malformed_smtp_host_is_a_usage_error_naming_it_and_records_no_sending(
        mail_env, monkeypatch, tmp_path, host):
    """--smtp-host smtp..example.org (a typo) ended in a Python traceback (UnicodeError:
    encoding with 'idna' codec failed), exit 1, and an UNCONFIRMED sending that blocked the
    week (a probe, this stop); "host:port" was retried for ever (exit 75). Now a host name
    that cannot be one is exit 2 naming the setting, before anything is recorded."""
    state = tmp_path / "state.sqlite"
    monkeypatch.setenv("DIGEST_SMTP_HOST", host)
    result = cli("email", str(EXAMPLES), "--week", "2026-W47", "--backend", "offline",
                 "--state", str(state))
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert repr(host) in result.stderr and "$DIGEST_SMTP_HOST" in result.stderr
    assert not state.exists() or sendings(state) == []


def test_a_sending_that_fails_before_the_hand_over_is_forgotten_whatever_the_error(tmp_path):
    """send_recorded forgot the record only on MailError: a ConfigError raised by the
    delivery (a MailSettings without a host, from a Python caller) left it UNCONFIRMED."""
    from digest.errors import ConfigError
    from digest.sending import send_recorded
    from digest.state import Store

    def no_server():  # type: ignore[no-untyped-def]
        raise ConfigError("no SMTP server to send through", setting="smtp_host")

    with Store(tmp_path / "state.sqlite") as store:
        with pytest.raises(ConfigError):
            send_recorded(store, "2026-W47", "<m@x>", ("a@example.org",), no_server)
        assert store.sendings("2026-W47") == []


class RudeGoodbye(Recorder):
    """Takes the message (250), then answers QUIT with a 4xx instead of 221."""

    async def handle_QUIT(self, server, session, envelope):  # noqa: N802
        return "421 4.3.0 closing"


def test_a_failed_goodbye_after_the_server_took_the_message_keeps_the_sending(
        mail_env, smtp_server, tmp_path):
    """A server that took the message (250) and then answered QUIT with a 4xx made the run
    exit 75 and forget the sending, so the retry mailed everyone twice (a probe, this stop).
    Once the server has accepted DATA the message is out: the sending is confirmed."""
    handler = RudeGoodbye()
    state = tmp_path / "state.sqlite"
    first = send(state, smtp_server(handler).port)
    assert first.returncode == 0, first.stderr
    assert [answer for _, _, answer in sendings(state)] == ["250 Message accepted"]
    again = send(state, smtp_server(handler).port)
    assert again.returncode == 0 and "already sent" in again.stdout, again.stderr
    assert len(handler.messages) == 1


def test_a_sent_mail_whose_summary_cannot_be_printed_is_recorded_and_exits_0(
        mail_env, smtp_server, tmp_path):
    """`digest email > /dev/full` sent the mail, then exited 75 "Error: .: cannot write ...;
    nothing more was done" (a probe, this stop): the message went out, so exit 0, and stderr
    says only the summary line was lost."""
    handler = Recorder()
    state = tmp_path / "state.sqlite"
    result = run_process("email", str(EXAMPLES), "--week", "2026-W47", "--backend", "offline",
                         "--state", str(state), "--smtp-host", "127.0.0.1", "--smtp-port",
                         str(smtp_server(handler).port), stdout="/dev/full")
    assert result.returncode == 0, result.stderr
    assert "standard output" in result.stderr and "was sent" in result.stderr
    assert len(handler.messages) == 1
    assert [answer for _, _, answer in sendings(state)] == ["250 Message accepted"]


class DiskFillsUp(Recorder):
    """Takes the message, but the store's disk is full by the time the 250 is answered."""

    def __init__(self, disk: Path):
        super().__init__()
        self.disk = disk

    async def handle_DATA(self, server, session, envelope):  # noqa: N802
        with suppress(OSError), open(self.disk / "filler", "wb") as filler:
            for _ in range(1024):  # 256 KiB at most: the disk's size
                filler.write(b"\0" * 1024)
                filler.flush()
        return await super().handle_DATA(server, session, envelope)


def test_a_sent_mail_the_store_cannot_record_says_it_went_out_and_is_not_a_retry(
        mail_env, smtp_server, small_disk, tmp_path):
    """The server took the message, then the store could not confirm the sending (its disk
    full or read-only): the run exited 75, "nothing was stored ... run again", though the
    mail had gone out and the retry can only stop at the unconfirmed sending (a probe, this
    stop). It exits 1 saying the mail went out and must not be sent again."""
    built = tmp_path / "state.sqlite"
    assert cli("newsletter", str(EXAMPLES), "--week", "2026-W47", "--backend", "offline",
               "--state", str(built), "--out", str(tmp_path / "out")).returncode == 0
    state = small_disk / "state.sqlite"  # the published week's store, on a 256 KiB disk
    shutil.copyfile(built, state)
    handler = DiskFillsUp(small_disk)
    port = smtp_server(handler).port
    first = send(state, port)
    assert first.returncode == 1, first.stderr
    assert "went out to team@example.org, lab@example.org" in first.stderr
    assert "do not send it again" in first.stderr and "run again" not in first.stderr
    again = send(state, port)
    assert again.returncode == 1 and "interrupted before the server confirmed" in again.stderr
    assert len(handler.messages) == 1


@pytest.mark.parametrize("where", ["env", "config"])
def test_the_store_and_folder_given_by_env_or_config_are_the_emails_too(
        mail_env, smtp_server, tmp_path, monkeypatch, where):
    """`digest email` read `--state` and `--out` from its flags only: with DIGEST_STATE (or
    `state` in the config file, which `digest config` showed as in force) every cron run
    mailed the week again, and the config's `out` was not the rising themes' history (a
    probe, this stop). Settings are flag > environment > config file > default."""
    state, out = tmp_path / "state.sqlite", tmp_path / "out"
    config = tmp_path / "digest.toml"
    if where == "env":
        monkeypatch.setenv("DIGEST_STATE", str(state))
        config.write_text(f'out = "{out}"\n', encoding="utf-8")
    else:
        config.write_text(f'state = "{state}"\nout = "{out}"\n', encoding="utf-8")
    assert cli("newsletter", str(EXAMPLES), "--week", "2026-W47", "--backend", "offline",
               "--config", str(config)).returncode == 0
    assert (out / "2026-W47.md").exists()
    handler = Recorder()
    port = str(smtp_server(handler).port)
    runs = [cli("email", str(EXAMPLES), "--week", "2026-W47", "--backend", "offline",
                "--config", str(config), "--smtp-host", "127.0.0.1", "--smtp-port", port)
            for _ in range(2)]
    assert [run.returncode for run in runs] == [0, 0], runs[0].stderr
    assert "already sent" in runs[1].stdout
    assert len(handler.messages) == 1
    assert [answer for _, _, answer in sendings(state)] == ["250 Message accepted"]


def test_a_mistyped_store_beside_a_folder_of_issues_mails_nothing(mail_env, smtp_server,
                                                                   tmp_path):
    """`--state sate.sqlite` (for state.sqlite) made a new store and mailed a week the real
    one had sent already (a probe, this stop): the newsletter refuses a store that knows no
    issue beside a folder that has some, and so does the e-mail now."""
    state, out = tmp_path / "state.sqlite", tmp_path / "out"
    assert cli("newsletter", str(EXAMPLES), "--week", "2026-W47", "--backend", "offline",
               "--state", str(state), "--out", str(out)).returncode == 0
    handler = Recorder()
    port = smtp_server(handler).port
    assert send(state, port, "--out", str(out)).returncode == 0
    typo = send(tmp_path / "sate.sqlite", port, "--out", str(out))
    assert typo.returncode == 1, typo.stderr
    assert "sate.sqlite holds no issue" in typo.stderr and "new-store" not in typo.stderr
    assert len(handler.messages) == 1

"""The e-mail side: `digest email` against a real SMTP server on 127.0.0.1, and `digest ingest`
as a mail hook filling the inbox that `digest newsletter` reads."""

from __future__ import annotations

import datetime as dt
import email
import email.policy
import hmac
import json
import socket
from email.headerregistry import Address
from pathlib import Path

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from digest.cli import app
from digest.errors import ConfigError, StateBusy
from digest.mail import MailSettings, as_eml, build_message, mail_settings, send
from digest.models import Issue, Record, Sighting, Stats
from digest.sending import send_recorded
from digest.state import Store
from digest.weeks import current_week

from .fake_openai import FakeOpenAI

EXAMPLES = Path(__file__).parent.parent / "examples"
PASSWORD = "s3cret-smtp-password"
FIRST_PAGE = "daily_papers_2026-11-16.txt"


class Recorder:
    """An SMTP handler that keeps what it got, or answers RCPT with a scripted code (for
    every recipient, or for the addresses in ``answers``)."""

    def __init__(self, rcpt_answer: str | None = None, answers: dict[str, str] | None = None):
        self.messages: list[email.message.EmailMessage] = []
        self.envelopes: list[tuple[str, list[str]]] = []
        self.rcpt_answer = rcpt_answer
        self.answers = answers or {}

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):  # noqa: N802
        answer = self.answers.get(address, self.rcpt_answer)
        if answer:
            return answer
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):  # noqa: N802
        self.envelopes.append((envelope.mail_from, list(envelope.rcpt_tos)))
        self.messages.append(email.message_from_bytes(envelope.content,
                                                      policy=email.policy.default))
        return "250 Message accepted"


def _accepting(user: bytes, password: bytes):
    """An aiosmtpd authenticator taking only this login, compared as the bytes sent."""
    def check(server, session, envelope, mechanism, auth_data):
        if auth_data.login == user and auth_data.password == password:
            return AuthResult(success=True)
        # aiosmtpd 1.4 leaves the client waiting on a failure unless the answer is given here
        return AuthResult(success=False, handled=False,
                          message="535 5.7.8 Authentication credentials invalid")
    return check


_check_login = _accepting(b"digest", PASSWORD.encode())


class Answering(Recorder):
    """Answers the message with a scripted (multi-line, hostile) answer; keeps it on a 250."""

    def __init__(self, data_answer: str):
        super().__init__()
        self.data_answer = data_answer

    async def handle_DATA(self, server, session, envelope):  # noqa: N802
        if self.data_answer.startswith("250"):
            await super().handle_DATA(server, session, envelope)
        return self.data_answer


class CramMD5(Recorder):
    """Offers CRAM-MD5 too (aiosmtpd has only LOGIN and PLAIN): smtplib prefers it."""

    CHALLENGE = b"<1896.697170952@127.0.0.1>"

    def __init__(self, user: bytes, password: bytes):
        super().__init__()
        self.user, self.password = user, password

    async def auth_CRAM__MD5(self, server, args):  # noqa: N802
        answer = await server.challenge_auth(self.CHALLENGE)
        digest = hmac.HMAC(self.password, self.CHALLENGE, "md5").hexdigest().encode()
        return AuthResult(success=answer == self.user + b" " + digest)


class OnlyForeignLogins(Recorder):
    """Offers AUTH GSSAPI NTLM only: logins Python's smtplib cannot do."""

    async def auth_GSSAPI(self, server, args):  # noqa: N802
        return AuthResult(success=False)

    async def auth_NTLM(self, server, args):  # noqa: N802
        return AuthResult(success=False)


@pytest.fixture
def smtp_server():
    servers = []

    def start(handler: Recorder, **kwargs):
        controller = Controller(handler, hostname="127.0.0.1", port=_free_port(), **kwargs)
        controller.start()
        servers.append(controller)
        return controller

    yield start
    for controller in servers:
        controller.stop()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def mail_env(monkeypatch):
    monkeypatch.setenv("DIGEST_MAIL_FROM", "digest@example.org")
    monkeypatch.setenv("DIGEST_MAIL_TO", "team@example.org, lab@example.org")
    monkeypatch.setenv("DIGEST_SMTP_STARTTLS", "0")  # the test server speaks plain SMTP


def _email(*args: str):
    return CliRunner().invoke(app, ["email", str(EXAMPLES), "--week", "2026-W47",
                                    "--backend", "offline", *args])


def test_eml_is_one_multipart_alternative_message_with_text_and_html(mail_env):
    result = _email("--eml")
    assert result.exit_code == 0, result.output
    message = email.message_from_bytes(result.stdout_bytes, policy=email.policy.default)
    assert message["Subject"] == "Research digest, 2026-W47 (16–22 November 2026)"
    assert message["To"] == "team@example.org, lab@example.org"
    assert message.get_content_type() == "multipart/alternative"
    text = message.get_body(("plain",)).get_content()
    html = message.get_body(("html",)).get_content()
    assert "ToolWeaver" in text and "<" not in text.split("\n", 1)[0]
    assert html.lstrip().lower().startswith("<!doctype html>")
    assert "ToolWeaver" in html


def test_send_by_smtp_with_login_and_no_password_anywhere(mail_env, smtp_server, monkeypatch,
                                                           tmp_path):
    handler = Recorder()
    server = smtp_server(handler, authenticator=_check_login, auth_require_tls=False)
    monkeypatch.setenv("DIGEST_SMTP_USER", "digest")
    monkeypatch.setenv("DIGEST_SMTP_PASSWORD", PASSWORD)
    report = tmp_path / "report.json"
    result = _email("--smtp-host", "127.0.0.1", "--smtp-port", str(server.port), "-vv",
                    "--report", str(report))
    assert result.exit_code == 0, result.output
    assert handler.envelopes == [("digest@example.org", ["team@example.org", "lab@example.org"])]
    assert handler.messages[0].get_content_type() == "multipart/alternative"
    assert PASSWORD not in result.output + report.read_text()


def test_addresses_with_a_name_or_a_domain_in_another_script_reach_a_plain_server(
        mail_env, smtp_server, monkeypatch):
    """"Jörg Muster <team@example.org>" or "lab@exämple.org" needed the server's SMTPUTF8 (the
    envelope took the name along, the domain was not in its ASCII form); a server without it
    was reported as one that "offers no login (AUTH)", and the To header of the message
    written out held an encoded word inside the address (a probe, this stop)."""
    monkeypatch.setenv("DIGEST_MAIL_TO", "Jörg Muster <team@example.org>, lab@exämple.org")
    handler = Recorder()
    server = smtp_server(handler)
    result = _email("--smtp-host", "127.0.0.1", "--smtp-port", str(server.port))
    assert result.exit_code == 0, result.output
    assert handler.envelopes == [("digest@example.org",
                                  ["team@example.org", "lab@xn--exmple-cua.org"])]
    written = email.message_from_bytes(_email("--eml").stdout_bytes, policy=email.policy.default)
    assert written["To"].addresses[1].addr_spec == "lab@xn--exmple-cua.org"
    assert written["To"].addresses[0].display_name == "Jörg Muster"


def test_one_mailbox_written_twice_in_the_list_is_sent_one_copy(mail_env, smtp_server,
                                                               monkeypatch):
    """"new@example.org, New <NEW@example.org>" put two RCPT TOs for one mailbox in one
    sending, where "sent once" already takes them as one (a probe, this stop)."""
    monkeypatch.setenv("DIGEST_MAIL_TO", "team@example.org, Team <TEAM@example.org>")
    handler = Recorder()
    server = smtp_server(handler)
    result = _email("--smtp-host", "127.0.0.1", "--smtp-port", str(server.port))
    assert result.exit_code == 0, result.output
    assert handler.envelopes == [("digest@example.org", ["team@example.org"])]


def test_wrong_password_is_a_final_error_that_says_what_to_fix(mail_env, smtp_server,
                                                               monkeypatch):
    server = smtp_server(Recorder(), authenticator=_check_login, auth_require_tls=False)
    monkeypatch.setenv("DIGEST_SMTP_USER", "digest")
    monkeypatch.setenv("DIGEST_SMTP_PASSWORD", "wrong-password")
    result = _email("--smtp-host", "127.0.0.1", "--smtp-port", str(server.port))
    assert result.exit_code == 1
    assert "DIGEST_SMTP_PASSWORD" in result.output and "wrong-password" not in result.output


@pytest.mark.parametrize("mechanism", ["PLAIN", "LOGIN", "CRAM-MD5"])
def test_a_user_and_password_outside_ascii_log_in_as_utf8(mail_env, smtp_server, monkeypatch,
                                                         mechanism):
    """DIGEST_SMTP_PASSWORD='Pässwörd-s3cret' or DIGEST_SMTP_USER='dígest' ended in a
    63-line traceback (UnicodeEncodeError: smtplib sends the login as ASCII), and left the
    sending UNCONFIRMED (a probe, stop 32). RFC 4616 gives PLAIN's login in UTF-8, and
    servers take LOGIN's and CRAM-MD5's the same way."""
    user, password = "dígest", "Pässwörd-s3cret"
    check = _accepting(user.encode(), password.encode())
    others = {"PLAIN": ["LOGIN"], "LOGIN": ["PLAIN"], "CRAM-MD5": []}[mechanism]
    handler = CramMD5(user.encode(), password.encode()) if mechanism == "CRAM-MD5" else Recorder()
    server = smtp_server(handler, authenticator=check, auth_require_tls=False,
                         auth_exclude_mechanism=others)
    monkeypatch.setenv("DIGEST_SMTP_USER", user)
    monkeypatch.setenv("DIGEST_SMTP_PASSWORD", password)
    result = _email("--smtp-host", "127.0.0.1", "--smtp-port", str(server.port))
    assert result.exit_code == 0, result.output
    assert len(handler.messages) == 1


def test_a_password_set_in_another_encoding_is_sent_as_the_bytes_set(mail_env, smtp_server,
                                                                     monkeypatch):
    """A variable whose bytes are not UTF-8 (a Latin-1 "Pässwörd") is the user's password as
    set: it goes to the server byte for byte, not as a UnicodeEncodeError."""
    password = "Pässwörd".encode("latin-1")
    server = smtp_server(Recorder(), authenticator=_accepting(b"digest", password),
                         auth_require_tls=False)
    monkeypatch.setenv("DIGEST_SMTP_USER", "digest")
    monkeypatch.setenv("DIGEST_SMTP_PASSWORD", password.decode("utf-8", "surrogateescape"))
    result = _email("--smtp-host", "127.0.0.1", "--smtp-port", str(server.port))
    assert result.exit_code == 0, result.output


def test_a_login_no_server_can_take_is_a_setting_to_fix_and_nothing_is_recorded(
        smtp_server, tmp_path):
    """A password holding a lone surrogate (from a Python caller) cannot be sent at all:
    a UnicodeEncodeError escaped send() and left the sending UNCONFIRMED (a probe, stop 32)."""
    handler = Recorder()
    server = smtp_server(handler, authenticator=_check_login, auth_require_tls=False)
    mail = MailSettings("digest@example.org", ("team@example.org",), host="127.0.0.1",
                        port=server.port, user="digest", password="pw\ud800", starttls=False)
    message = email.message.EmailMessage()
    message["Subject"] = "test"
    message.set_content("hello")
    with Store(tmp_path / "state.sqlite") as store:
        with pytest.raises(ConfigError) as raised:
            send_recorded(store, "2026-W47", "<m@x>", mail.recipients,
                          lambda: send(message, mail))
        assert store.sendings("2026-W47") == []
    assert raised.value.setting == "smtp_password" and "\ud800" not in str(raised.value)
    assert handler.messages == []


def test_a_server_offering_only_logins_python_cannot_do_is_a_configuration_error(
        mail_env, smtp_server, monkeypatch):
    """EHLO "250-AUTH GSSAPI NTLM" with DIGEST_SMTP_USER set exited 75 "unavailable
    (SMTPException: No suitable authentication method found.); try again later" every run:
    no retry can mend it (a probe, stop 32)."""
    server = smtp_server(OnlyForeignLogins(), authenticator=_check_login,
                         auth_require_tls=False, auth_exclude_mechanism=["LOGIN", "PLAIN"])
    monkeypatch.setenv("DIGEST_SMTP_USER", "digest")
    monkeypatch.setenv("DIGEST_SMTP_PASSWORD", PASSWORD)
    result = _email("--smtp-host", "127.0.0.1", "--smtp-port", str(server.port))
    assert result.exit_code == 1, result.output
    assert "GSSAPI NTLM" in result.output and "try again later" not in result.output
    assert len(result.output.strip().splitlines()) == 1


@pytest.mark.parametrize(("answer", "code"), [("451 4.3.0 try later", 75),
                                              ("550 5.1.1 no such user", 1)])
def test_deferred_recipients_exit_75_and_refused_ones_exit_1(mail_env, smtp_server, answer,
                                                             code):
    server = smtp_server(Recorder(rcpt_answer=answer))
    result = _email("--smtp-host", "127.0.0.1", "--smtp-port", str(server.port))
    assert result.exit_code == code, result.output
    assert answer.split()[0] in result.output


def test_one_deferred_recipient_among_refused_ones_makes_the_run_a_retry(mail_env, smtp_server):
    """Every recipient turned away, one for now (4xx) and one for good (5xx), exited 1 as if
    no retry could deliver; a retry can reach the deferred one, so the run exits 75, as it
    does when some recipients were taken (a probe)."""
    server = smtp_server(Recorder(answers={"team@example.org": "451 4.2.1 mailbox busy",
                                           "lab@example.org": "550 5.1.1 no such user"}))
    result = _email("--smtp-host", "127.0.0.1", "--smtp-port", str(server.port))
    assert result.exit_code == 75, result.output
    assert "team@example.org: 451 4.2.1 mailbox busy" in result.output
    assert "lab@example.org: 550 5.1.1 no such user" in result.output


GMAIL_REFUSAL = ("550-5.7.1 The message was rejected. Please try\r\n"
                 "550-5.7.1 again with fewer links.\r\n"
                 "550 5.7.1 https://support.google.com/mail/?p=UnsolicitedMessageError")


@pytest.mark.parametrize("where", ["DATA", "RCPT"])
def test_a_multi_line_server_answer_is_one_line_in_the_error_and_the_report(
        mail_env, smtp_server, tmp_path, where):
    """Gmail's three-line 550 made the error three lines on stderr and put "\\n" in the run
    report's errors (a probe, stop 32): every error is one line."""
    handler = Answering(GMAIL_REFUSAL) if where == "DATA" else Recorder(GMAIL_REFUSAL)
    server = smtp_server(handler)
    report = tmp_path / "report.json"
    result = _email("--smtp-host", "127.0.0.1", "--smtp-port", str(server.port),
                    "--report", str(report))
    assert result.exit_code == 1, result.output
    assert len(result.stderr.strip().splitlines()) == 1
    assert ("550 5.7.1 The message was rejected. Please try again with fewer links. "
            "https://support.google.com/mail/?p=UnsolicitedMessageError") in result.stderr
    errors = json.loads(report.read_text())["errors"]
    assert len(errors) == 1 and "\n" not in errors[0] and "https://support" in errors[0]


def test_a_server_answer_reaches_the_terminal_and_the_store_without_controls(
        mail_env, smtp_server, tmp_path):
    """A 250 answer was printed raw: "sent … (250 2.0.0 OK\\n2.0.0 \\x1b]0;pwned\\x07…)", so
    a server's terminal escapes reached the user's terminal (a probe, stop 32). Now its
    lines are joined, controls (C0, C1, bidi) dropped, and its length bounded."""
    handler = Answering("250-2.0.0 OK\r\n250-2.0.0 \x1b]0;pwned\x07 \x9b31m\u202eevil\u202c\r\n"
                        f"250 2.0.0 {'x' * 5000}")
    server = smtp_server(handler, enable_SMTPUTF8=True)
    state = tmp_path / "state.sqlite"
    result = _email("--smtp-host", "127.0.0.1", "--smtp-port", str(server.port),
                    "--state", str(state))
    assert result.exit_code == 0, result.output
    assert len(handler.messages) == 1
    with Store(state) as store:
        kept = store.sendings("2026-W47")[0]["answer"]
    for shown in (result.stdout.strip(), kept):
        assert shown.isprintable() and len(shown) < 1000
        assert "250 2.0.0 OK" in shown and "pwned" in shown


def test_no_smtp_server_listening_is_a_temporary_failure(mail_env):
    result = _email("--smtp-host", "127.0.0.1", "--smtp-port", str(_free_port()))
    assert result.exit_code == 75
    assert "try again later" in result.output


def test_starttls_required_by_default(mail_env, smtp_server, monkeypatch):
    monkeypatch.delenv("DIGEST_SMTP_STARTTLS")
    server = smtp_server(Recorder())
    result = _email("--smtp-host", "127.0.0.1", "--smtp-port", str(server.port))
    assert result.exit_code == 1
    assert "STARTTLS" in result.output


@pytest.mark.parametrize("args", [["--to", "not-an-address"], ["--to", "a@b.org\nBcc: x@y.org"]])
def test_bad_addresses_are_usage_errors(mail_env, args):
    result = _email("--eml", *args)
    assert result.exit_code == 2
    assert "not an e-mail address" in result.output


@pytest.mark.parametrize(("option", "value"), [
    ("--to", "a@b@example.org"), ("--to", "t@example.org>, <evil@evil.org"),
    ("--to", "Team\u2028X <t@example.org>"), ("--to", "Team\vX <t@example.org>"),
    ("--to", "Team\u0085X <t@example.org>"), ("--to", "Team\u202eX <t@example.org>"),
    ("--from", "Digest\fBot <d@example.org>"), ("--from", "d@example.org\x1b]0;x\x07")])
def test_a_malformed_address_is_one_usage_line_naming_its_option(mail_env, option, value):
    """'a@b@example.org' ended in a HeaderParseError traceback, a display name holding \\v,
    \\f, U+0085 or U+2028 in "ValueError: Header values may not contain linefeed" (a probe,
    stop 32): only \\r and \\n were checked, and only ValueError caught."""
    result = _email("--eml", option, value)
    assert result.exit_code == 2, result.output
    assert result.stdout == "" and len(result.stderr.strip().splitlines()) == 1
    assert "not an e-mail address" in result.stderr and option in result.stderr


def test_a_malformed_address_in_the_environment_names_the_variable(mail_env, monkeypatch):
    monkeypatch.setenv("DIGEST_MAIL_TO", "Team\u0085X <t@example.org>")
    result = _email("--eml")
    assert result.exit_code == 2, result.output
    assert "$DIGEST_MAIL_TO" in result.stderr and len(result.stderr.strip().splitlines()) == 1


_HOSTILE = st.sampled_from([
    "a", "Team", "x.y", "@", "<", ">", '"', ",", ";", ":", "\\", "(", ")", " ", "\t", "\r",
    "\n", "\v", "\f", "\x00", "\x1b", "\x7f", "\x85", "\u2028", "\u2029", "\u202e",
    "\u200b", "\ud800", "ä", "ß", "例", "exämple.org", "example.org", "=?utf-8?q?x?=",
    "Bcc: evil@evil.org", "\r\nBcc: evil@evil.org", "[127.0.0.1]", "xn--", ".", ".."])


@settings(max_examples=400, deadline=None)
@given(st.lists(_HOSTILE, min_size=1, max_size=8).map("".join), st.booleans())
def test_no_address_makes_a_traceback_or_a_header_of_its_own(text, as_sender):
    """Whatever an address holds, it is refused as a setting (exit 2) or becomes exactly the
    addresses in the From and To headers of a message with only our headers (a probe, stop 32:
    HeaderParseError and ValueError tracebacks)."""
    given_settings = {"mail_from": "d@example.org", "mail_to": "t@example.org",
                      "smtp_host": None, "smtp_port": 587, "smtp_user": None,
                      "smtp_password": None, "smtp_starttls": "1"}
    given_settings["mail_from" if as_sender else "mail_to"] = text
    try:
        mail = mail_settings(given_settings, sending=False)  # type: ignore[arg-type]
    except ConfigError as error:
        assert error.setting == ("mail_from" if as_sender else "mail_to")
        assert str(error).isprintable()
        return
    issue = Issue(week="2026-W47", start=dt.date(2026, 11, 16), end=dt.date(2026, 11, 22),
                  intro="", sections=(), stats=Stats(), backend="offline", model=None)
    written = email.message_from_bytes(
        as_eml(build_message(issue, text="hi", html="<p>hi</p>", settings=mail)),
        policy=email.policy.default)
    assert sorted(written.keys()) == sorted([
        "Subject", "From", "To", "Date", "Message-ID", "Auto-Submitted", "MIME-Version",
        "Content-Type"])
    assert [a.addr_spec for a in written["From"].addresses] == [_bare(mail.sender)]
    assert [a.addr_spec for a in written["To"].addresses] == list(map(_bare, mail.recipients))


def _bare(address: str) -> str:
    return Address(addr_spec=address.rpartition("<")[2].rstrip(">")).addr_spec


def test_no_recipient_is_a_usage_error(mail_env, monkeypatch):
    monkeypatch.delenv("DIGEST_MAIL_TO")
    result = _email("--eml")
    assert result.exit_code == 2
    assert "--to" in result.output


# digest ingest: the mail hook ---------------------------------------------------------------

def _listing(*titles: str) -> str:
    return json.dumps([{"title": t, "abstract": f"We study {t.lower()} in depth. It works well."}
                       for t in titles])


def _ingest(state: Path, text: str):
    return CliRunner().invoke(app, ["ingest", "-", "--state", str(state)], input=text)


def test_ingest_keeps_records_and_a_redelivered_message_is_a_no_op(tmp_path):
    state = tmp_path / "state.sqlite"
    first = _ingest(state, _listing("Sparse Widgets", "Dense Gadgets"))
    again = _ingest(state, _listing("Sparse Widgets", "Dense Gadgets"))
    assert first.exit_code == again.exit_code == 0
    assert first.stdout.startswith("2 new records")
    assert again.stdout.startswith("0 new records")


def test_ingest_of_nothing_usable_exits_1_and_stores_nothing(tmp_path):
    state = tmp_path / "state.sqlite"
    result = _ingest(state, "just some words, no listing here\n")
    assert result.exit_code == 1
    assert "nothing was stored" in result.output


def test_newsletter_takes_the_inbox_once(tmp_path):
    state, out = tmp_path / "state.sqlite", tmp_path / "out"
    _ingest(state, _listing("Sparse Widgets", "Dense Gadgets"))
    _ingest(state, _listing("Dense Gadgets", "Quiet Sprockets"))  # a second listing e-mail

    def newsletter(week: str, code: int = 0) -> dict:
        report = tmp_path / f"{week}.json"
        result = CliRunner().invoke(app, ["newsletter", "--state", str(state), "--out", str(out),
                                          "--week", week, "--backend", "offline",
                                          "--report", str(report)])
        assert result.exit_code == code, result.output
        return json.loads(report.read_text())["counts"]

    # Undated listing records belong to the week they were ingested in: this one.
    this_week, next_week = current_week(), current_week(dt.date.today() + dt.timedelta(days=7))
    counts = newsletter(this_week)
    assert (counts["records_read"], counts["papers_in_issue"]) == (4, 3)
    assert "Dense Gadgets" in (out / f"{this_week}.md").read_text()
    assert "in 2 listings" in (out / f"{this_week}.md").read_text()
    assert newsletter(this_week)["papers_in_issue"] == 3  # a re-run of the week is the same
    # Next week is a week to come, refused before anything is read (a usage error).
    assert newsletter(next_week, code=2)["records_read"] == 0


def test_a_locked_store_is_a_temporary_failure_and_loses_nothing(tmp_path):
    path = tmp_path / "state.sqlite"
    record = Record("Sparse Widgets", "We study widgets.", Sighting("mail-1", 1))
    with Store(path) as holder, Store(path, busy_timeout_s=0.05) as hook:
        holder._db.execute("BEGIN EXCLUSIVE")
        with pytest.raises(StateBusy) as caught:
            hook.add_to_inbox([record])
        assert caught.value.exit_code == 75
        holder._db.execute("ROLLBACK")
        assert hook.add_to_inbox([record]) == 1  # the retry stores it


LATIN1_MAIL = """\
From: no-reply@arxiv.org
To: reader@example.org
Subject: cs daily Subj-class mailing 1 of 1
Date: Fri, 20 Nov 2026 03:12:40 +0000
MIME-Version: 1.0
Content-Type: text/plain; charset=iso-8859-1
Content-Transfer-Encoding: 8bit

------------------------------------------------------------------------------
\\\\
arXiv:2611.07001
Date: Thu, 19 Nov 2026 17:58:01 GMT   (812kb,D)

Title: Espresso Graphs: Scheduling Café Queues with Message Passing
Authors: Zoé Marchetti and Ada Comma
Categories: cs.LG
\\\\
  We model the queue of a busy café as a graph and schedule orders with message
passing. Waiting time drops by a third in a made-up simulation.
\\\\ ( https://arxiv.org/abs/2611.07001 ,  812kb)
------------------------------------------------------------------------------
""".encode("iso-8859-1")


def test_a_listing_email_in_latin1_8bit_goes_through_the_hook_into_the_issue(tmp_path):
    state, out = tmp_path / "state.sqlite", tmp_path / "out"
    hook = CliRunner().invoke(app, ["ingest", "-", "--state", str(state)], input=LATIN1_MAIL)
    assert hook.exit_code == 0, hook.output
    assert hook.stdout.startswith("1 new record ")
    result = CliRunner().invoke(app, ["newsletter", "--state", str(state), "--out", str(out),
                                      "--week", "2026-W47", "--backend", "offline"])
    assert result.exit_code == 0, result.output
    issue = (out / "2026-W47.md").read_text(encoding="utf-8")
    assert "Scheduling Café Queues" in issue
    assert "(<https://arxiv.org/abs/2611.07001>)" in issue  # the link comes from the record


def test_email_after_the_newsletter_reuses_its_llm_answers(mail_env, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    state, out = tmp_path / "state.sqlite", tmp_path / "out"
    with FakeOpenAI() as server:
        llm = ["--backend", "openai", "--base-url", server.url, "--state", str(state)]
        # The first page again, as listed a week earlier: W46 carries its papers.
        page = tmp_path / "daily_papers_2026-11-09.txt"
        page.write_text((EXAMPLES / FIRST_PAGE).read_text(encoding="utf-8")
                        .replace("\nNov 16\n", "\nNov 9\n", 1), encoding="utf-8")
        earlier = CliRunner().invoke(app, ["newsletter", str(page), "--out",
                                           str(out), "--week", "2026-W46", *llm])
        assert earlier.exit_code == 0, earlier.output
        llm += ["--week", "2026-W47"]
        weekly = CliRunner().invoke(app, ["newsletter", str(EXAMPLES), "--out", str(out), *llm])
        assert weekly.exit_code == 0, weekly.output
        calls = len(server.chat_requests)
        assert calls > 0
        mail = CliRunner().invoke(app, ["email", str(EXAMPLES), "--eml", "--out", str(out), *llm])
        assert mail.exit_code == 0, mail.output
        assert len(server.chat_requests) == calls  # every answer came from the cache
    message = email.message_from_bytes(mail.stdout_bytes, policy=email.policy.default)
    text = message.get_body(("plain",)).get_content()
    issue = (out / "2026-W47.md").read_text(encoding="utf-8")
    first_theme = next(line[6:line.index("](")] for line in issue.splitlines()
                       if line.startswith("| 1. ["))  # the first row of the contents
    assert first_theme.replace("\\", "") in text
    assert "ToolWeaver" not in text  # W46 carried it: the mail leaves it out like the issue
    assert "## Rising themes" in issue and "Rising themes" in text  # --out: the same history


def test_store_nonce_is_secret_per_store_and_stable_per_week(tmp_path):
    with Store(tmp_path / "a.sqlite") as a, Store(tmp_path / "b.sqlite") as b:
        assert a.nonce("2026-W47") == a.nonce("2026-W47")
        assert a.nonce("2026-W47") != a.nonce("2026-W48")
        assert a.nonce("2026-W47") != b.nonce("2026-W47")  # a random secret, not the papers
    with Store(tmp_path / "a.sqlite") as again:
        assert len(again.nonce("2026-W47")) == 12


def test_a_week_whose_listings_grow_asks_only_what_changed(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    extra = Path(__file__).parent / "fixtures" / "one_more_agents_paper.json"
    with FakeOpenAI() as server:
        args = ["newsletter", "--backend", "openai", "--base-url", server.url, "--week",
                "2026-W47", "--state", str(tmp_path / "s.sqlite"), "--out", str(tmp_path / "out"),
                str(EXAMPLES)]
        assert CliRunner().invoke(app, args).exit_code == 0
        first = len(server.chat_requests)
        assert CliRunner().invoke(app, [*args, str(extra)]).exit_code == 0
        second = len(server.chat_requests) - first
    assert 0 < second < first  # the themes the new paper left alone come from the cache


@pytest.mark.parametrize(("variable", "value", "setting"), [
    ("DIGEST_SMTP_PORT", "twenty-five", "smtp_port"),
    ("DIGEST_SMTP_STARTTLS", "maybe", "smtp_starttls")])
def test_a_bad_smtp_variable_is_a_usage_error_naming_it(mail_env, monkeypatch, variable, value,
                                                       setting):
    """Mail settings are resolved with every other setting (flag > environment): a bad value
    names the setting and the variable that set it."""
    monkeypatch.setenv(variable, value)
    result = _email("--smtp-host", "127.0.0.1")
    assert result.exit_code == 2
    assert f"{setting} = {value!r}" in result.output
    assert f"${variable}" in result.output


@pytest.mark.parametrize("value", ["99999", "0", "65536"])
def test_an_smtp_port_out_of_range_is_a_usage_error_not_a_retry(mail_env, monkeypatch, value):
    """DIGEST_SMTP_PORT=99999 exited 75 (the connection failed, "try again later"), so a
    mail system would retry a configuration error for ever, while --smtp-port 70000 exited
    2 (a probe). Now the value is checked where the mail settings are read."""
    monkeypatch.setenv("DIGEST_SMTP_PORT", value)
    result = _email("--smtp-host", "127.0.0.1")
    assert result.exit_code == 2, result.output
    assert f"smtp_port = {value!r}" in result.output and "1 to 65535" in result.output
    assert "$DIGEST_SMTP_PORT" in result.output


def test_an_smtp_port_in_the_config_file_is_a_usage_error_naming_it(mail_env, tmp_path):
    """The SMTP settings are read from the environment and flags only: a config file that
    sets one exits 2 naming the key, whatever its value (a probe)."""
    config = tmp_path / "digest.toml"
    config.write_text("[digest]\nsmtp_port = 99999\n", encoding="utf-8")
    result = _email("--smtp-host", "127.0.0.1", "--config", str(config))
    assert result.exit_code == 2, result.output
    assert "unknown keys smtp_port" in result.output


def test_digest_config_shows_the_mail_settings_with_the_password_masked(mail_env, monkeypatch):
    monkeypatch.setenv("DIGEST_SMTP_PASSWORD", PASSWORD)
    monkeypatch.setenv("DIGEST_SMTP_STARTTLS", "0")
    result = CliRunner().invoke(app, ["config", "--json"])
    shown = json.loads(result.output)
    assert shown["smtp_starttls"] == {"value": "0", "from": "env DIGEST_SMTP_STARTTLS"}
    assert shown["smtp_password"]["value"] != PASSWORD and PASSWORD not in result.output


def _mail(listing: str, trace: str = "") -> str:
    return (f"{trace}From: papers@lists.example\nTo: digest@example.org\nSubject: New papers\n"
            "Message-ID: <listing-42@lists.example>\nContent-Type: application/json\n\n"
            f"{listing}\n")


def test_a_mail_redelivered_with_other_trace_headers_is_the_same_listing(tmp_path):
    """An MTA that redelivers adds Received: lines: the bytes differ, so the mail counted as a
    second listing and every paper read "in 2 listings" (a probe, stop 28). A message with a
    Message-ID is named by it."""
    state, out = tmp_path / "state.sqlite", tmp_path / "out"
    listing = _listing("Sparse Widgets", "Dense Gadgets")
    first = _ingest(state, _mail(listing))
    again = _ingest(state, _mail(listing, "Received: from mx2.example by mx1.example\n"))
    assert first.stdout.startswith("2 new records") and again.stdout.startswith("0 new records")
    result = CliRunner().invoke(app, ["newsletter", "--state", str(state), "--out", str(out),
                                      "--backend", "offline"])
    assert result.exit_code == 0, result.output
    assert "listings)" not in (out / f"{current_week()}.md").read_text()


def test_a_mail_without_a_message_id_redelivered_with_other_trace_headers_is_the_same(tmp_path):
    """Without a Message-ID the mail was named by all its bytes, so a redelivery with one
    more Received: line stored its records again, "3 new records kept" twice (a probe, this
    stop). It is named by what a relay does not change: sender, date, subject and body."""
    state = tmp_path / "state.sqlite"
    listing = _listing("Sparse Widgets", "Dense Gadgets")
    plain = _mail(listing).replace("Message-ID: <listing-42@lists.example>\n", "")
    first = _ingest(state, plain)
    again = _ingest(state, "Received: from mx2.example by mx1.example\n"
                           "Return-Path: <bounce-7@lists.example>\n" + plain)
    other = _ingest(state, plain.replace("Subject: New papers", "Subject: New papers, again"))
    assert first.stdout.startswith("2 new records") and again.stdout.startswith("0 new records")
    assert other.stdout.startswith("2 new records")  # another mail: its listing counts again


@pytest.mark.parametrize("name", ["山田\u3000太郎", "Team\u00a0Lab", "Équipe\u202fIA"])
def test_a_display_name_with_a_space_of_another_script_is_an_address(name):
    """The printable-only rule refused "山田\u3000太郎 <y@example.org>" (an ideographic
    space), a no-break space and a narrow one as "a control or invisible character": a
    DIGEST_MAIL_TO that worked broke after the upgrade (a re-probe, stop 32)."""
    from email import message_from_string, policy
    from email.message import EmailMessage

    from digest.mail import _checked_address

    checked = _checked_address(f"{name} <y@example.org>", "mail_to")
    message = EmailMessage(policy=policy.SMTP)
    message["To"] = checked
    read = message_from_string(message.as_string(), policy=policy.default)
    assert read["To"].addresses[0].display_name == name
    assert read["To"].addresses[0].addr_spec == "y@example.org"

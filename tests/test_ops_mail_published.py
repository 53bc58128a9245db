"""`digest email --state` mails the issue the newsletter published for the week, as the store
kept it: not an issue built again from listings that may have grown, with options that may
differ, or with a model that answers now where it did not then (stop 29 left this open)."""

from __future__ import annotations

import csv
import datetime as dt
import email
import email.policy
import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from digest.cli import app
from tests.conftest import EXAMPLES, SHARED_DATA
from tests.fake_openai import FakeOpenAI, Reply
from tests.opsrun import cli, kill9, pending_weeks, start_paused, week_listing
from tests.test_mail import mail_env  # noqa: F401 - the fixture every test here uses

pytestmark = pytest.mark.usefixtures("mail_env")
WEEK = "2026-W47"


def parts(eml: str | bytes) -> tuple[str, str]:
    """The text and HTML parts of a message."""
    raw = eml.encode() if isinstance(eml, str) else eml
    message = email.message_from_bytes(raw, policy=email.policy.default)
    text, html = (message.get_body((kind,)) for kind in ("plain", "html"))
    assert text is not None and html is not None
    return text.get_content(), html.get_content()


def published(out: Path) -> tuple[str, str]:
    return tuple((out / f"{WEEK}.{suffix}").read_text(encoding="utf-8")  # type: ignore[return-value]
                 for suffix in ("txt", "html"))


def published_week(tmp_path: Path, *newsletter: str, listings: Path = EXAMPLES) -> list[str]:
    """Publish the week's issue (md, html, txt) with the offline backend; return the options
    the e-mail shares with it."""
    common = [str(listings), "--week", WEEK, "--backend", "offline",
              "--state", str(tmp_path / "s.sqlite"), "--out", str(tmp_path / "out")]
    made = cli("newsletter", *common, "--formats", "md,html,txt", *newsletter)
    assert made.returncode == 0, made.stderr
    return common


def forget_kept_issue(tmp_path: Path, value: bytes | None) -> None:
    with sqlite3.connect(tmp_path / "s.sqlite") as db:
        db.execute("UPDATE issues SET issue = ?", (value,))


def late_listing(folder: Path) -> None:
    """A listing file dated in the week, come after its issue went out."""
    (folder / "late_2026-11-19.json").write_text(json.dumps([{
        "title": "Quokka Routing for Sparse Mixture Models",
        "abstract": "We route tokens to experts by a learned quokka score and halve the "
                    "cost of sparse mixture models at equal quality.",
        "arxiv_id": "2611.99901", "published": "2026-11-19"}]), encoding="utf-8")


def test_a_listing_come_after_the_issue_does_not_stop_its_mail(tmp_path):
    """A listing file dated in a published week made `digest email --state` build a 31-paper
    issue and refuse it as "not the issue published" (exit 2): the week's mail could not
    be sent at all. The mail is now the issue published, byte for byte its text and HTML."""
    listings = tmp_path / "listings"
    shutil.copytree(EXAMPLES, listings)
    common = published_week(tmp_path, listings=listings)
    late_listing(listings)
    mailed = cli("email", *common, "--eml")
    assert mailed.returncode == 0, mailed.stderr
    assert parts(mailed.stdout) == published(tmp_path / "out")
    assert "Quokka" not in mailed.stdout


def test_the_mail_is_the_issue_published_whatever_options_the_email_is_given(tmp_path):
    """The newsletter ran with --max-papers 5; the e-mail without it built a 30-paper issue
    (stop 28 refused it, exit 2). The issue kept is mailed: 5 papers listed, as published."""
    common = published_week(tmp_path, "--max-papers", "5")
    mailed = cli("email", *common, "--eml")
    assert mailed.returncode == 0, mailed.stderr
    assert parts(mailed.stdout) == published(tmp_path / "out")


def test_an_issue_published_before_issues_were_kept_is_still_checked_against_the_build(tmp_path):
    """A store upgraded from stop 29 holds its issues without their copy: the e-mail builds
    the issue again, and refuses one with other papers than the published (exit 2)."""
    common = published_week(tmp_path, "--max-papers", "5")
    forget_kept_issue(tmp_path, None)
    other = cli("email", *common, "--eml")
    assert other.returncode == 2, other.stderr
    assert "not the issue published" in other.stderr and other.stdout == ""
    assert cli("email", *common, "--max-papers", "5", "--eml").returncode == 0


def test_a_store_row_that_cannot_be_read_falls_back_to_building_the_issue(tmp_path):
    common = published_week(tmp_path)
    forget_kept_issue(tmp_path, b"\x00\xff")
    mailed = cli("email", *common, "--eml")
    assert mailed.returncode == 0, mailed.stderr
    assert "could not be read" in mailed.stderr
    assert parts(mailed.stdout) == published(tmp_path / "out")  # the same listings, built again


def _llm(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, list(args))


def test_a_theme_summarised_offline_is_mailed_as_published_without_asking_the_model(
        tmp_path, monkeypatch):
    """The newsletter's model was down, so its themes were summarised offline; the e-mail
    built the issue again, asked the model (up now) for every theme, and mailed summaries
    the published issue never had. It now mails the published issue and asks nothing."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    state, out = tmp_path / "s.sqlite", tmp_path / "out"
    common = [str(EXAMPLES), "--week", WEEK, "--backend", "openai", "--timeout", "5",
              "--state", str(state), "--out", str(out)]
    with FakeOpenAI(default=Reply(status=400, error={"message": "down"})) as down:
        made = _llm("newsletter", *common, "--base-url", down.url, "--formats", "md,txt,html")
        assert made.exit_code == 0, made.output
        assert down.chat_requests
    assert "summarised offline" in (out / f"{WEEK}.md").read_text(encoding="utf-8")
    with FakeOpenAI() as up:
        mailed = _llm("email", *common, "--base-url", up.url, "--eml")
        assert mailed.exit_code == 0, mailed.output
        assert up.chat_requests == []
    assert parts(mailed.stdout_bytes) == published(out)
    refused = _llm("email", *common, "--eml", "--fail-on-degraded")
    assert refused.exit_code == 1
    assert "re-run the newsletter for 2026-W47" in refused.stderr and refused.stdout == ""


def intro_fails(body: dict) -> Reply | None:  # type: ignore[type-arg]
    """The model answers the themes but not the intro (its items are [T1], [T2], ...)."""
    asked = "\n".join(str(message.get("content")) for message in body.get("messages", []))
    return Reply(status=400, error={"message": "no"}) if "\n[T1] " in asked else None


def test_an_issue_whose_intro_fell_back_is_degraded_in_the_mail_report_and_refused(
        tmp_path, monkeypatch):
    """The kept issue forgot that its intro fell back (and the report said degraded: false
    for fallback themes): `email --fail-on-degraded` mailed what `newsletter
    --fail-on-degraded` refuses (a probe, this stop)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    common = [str(EXAMPLES), "--week", WEEK, "--backend", "openai", "--timeout", "5",
              "--state", str(tmp_path / "s.sqlite"), "--out", str(tmp_path / "out")]
    with FakeOpenAI(responder=intro_fails) as server:
        made = _llm("newsletter", *common, "--base-url", server.url)
        assert made.exit_code == 0, made.output
    report = tmp_path / "report.json"
    mailed = _llm("email", *common, "--eml", "--report", str(report))
    assert mailed.exit_code == 0, mailed.output
    llm = json.loads(report.read_text(encoding="utf-8"))["llm"]
    assert llm["degraded"] is True and llm["fallback_themes"] == [] and llm["calls"] == 0
    refused = _llm("email", *common, "--eml", "--fail-on-degraded")
    assert refused.exit_code == 1, refused.output
    assert "(the intro fell back)" in refused.stderr and refused.stdout == ""


def test_an_issue_a_killed_newsletter_left_pending_is_kept_and_mailed_once_finished(tmp_path):
    state, out = tmp_path / "s.sqlite", tmp_path / "out"
    common = [str(EXAMPLES), "--week", WEEK, "--backend", "offline", "--state", str(state)]
    kill9(start_paused(tmp_path, "pending", "newsletter", *common, "--out", str(out),
                       "--formats", "md,txt,html"))
    assert pending_weeks(state) == [WEEK]
    mailed = cli("email", *common, "--out", str(out), "--eml")
    assert mailed.returncode == 0, mailed.stderr
    assert pending_weeks(state) == []
    with sqlite3.connect(state) as db:
        assert db.execute("SELECT issue IS NOT NULL FROM issues").fetchall() == [(1,)]
    assert parts(mailed.stdout) == published(out)


def arxiv_weeks(folder: Path, plan: dict[str, list[tuple[str, int]]]) -> None:
    """One JSON-lines listing a week of real arXiv records (../shared/data), ``plan`` giving
    each week's categories and how many of each."""
    by_category: dict[str, list[dict[str, str]]] = {}
    with open(SHARED_DATA / "arxiv_metadata_sample.csv", encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            by_category.setdefault(row["categories"].split()[0], []).append(row)
    folder.mkdir()
    for week, mix in plan.items():
        monday = dt.date.fromisocalendar(int(week[:4]), int(week[6:]), 1)
        rows = [row for category, count in mix for row in by_category[category][:count]]
        for category, count in mix:
            del by_category[category][:count]
        (folder / f"{week}.jsonl").write_text("".join(json.dumps({
            "title": row["title"], "abstract": row["abstract"], "arxiv_id": row["id"],
            "published": monday.isoformat()}) + "\n" for row in rows), encoding="utf-8")


def test_the_rising_themes_mailed_are_the_ones_published_whatever_weeks_came_since(tmp_path):
    """The mail judged the week's rising themes against the history as it is when mailing:
    an earlier week published afterwards (a backfill, or a re-run with other options)
    changed "Compared with ..." and the themes listed, so the mail was not the issue
    published (a probe, this stop). The issues compared with are kept with the issue."""
    listings, out = tmp_path / "listings", tmp_path / "out"
    arxiv_weeks(listings, {"2026-W45": [("astro-ph", 40), ("hep-ph", 8)],
                           "2026-W46": [("astro-ph", 30), ("quant-ph", 10)],
                           "2026-W47": [("quant-ph", 25), ("hep-ph", 25)]})
    common = ["--backend", "offline", "--state", str(tmp_path / "s.sqlite"), "--out", str(out)]
    for week in ("2026-W46", "2026-W47", "2026-W45"):  # the last one a backfill
        made = cli("newsletter", str(listings), "--week", week, *common,
                   "--formats", "md,html,txt")
        assert made.returncode == 0, made.stderr
    text, _ = published(out)
    assert "Compared with 2026-W46" in text  # so W45's backfill would change it
    assert "2026-W45" in (out / ".history.json").read_text(encoding="utf-8")
    mailed = cli("email", "--week", WEEK, *common, "--eml")
    assert mailed.returncode == 0, mailed.stderr
    assert parts(mailed.stdout) == published(out)


def test_a_week_the_newsletter_has_not_published_is_not_mailed_from_its_store(tmp_path):
    """After a catch-up that wrote only 2026-W46, the cron line's `email --week 2026-W47`
    built and sent a "no papers this week" issue and recorded W47 as sent; the real W47
    issue, published when its listing came, was then never mailed (a probe, this stop).
    A store whose newsletter publishes issues mails only what it published."""
    listings = tmp_path / "in"
    week_listing(listings, "2026-W46", 2)
    common = ["--backend", "offline", "--state", str(tmp_path / "s.sqlite"),
              "--out", str(tmp_path / "out")]
    assert cli("newsletter", str(listings), "--catch-up", "--week", WEEK, *common
               ).returncode == 0
    assert not (tmp_path / "out" / f"{WEEK}.md").exists()
    early = cli("email", str(listings), "--week", WEEK, *common, "--eml")
    assert early.returncode == 1, early.stderr
    assert "2026-W47 is not published" in early.stderr and early.stdout == ""
    week_listing(listings, WEEK, 1)
    assert cli("newsletter", str(listings), "--catch-up", "--week", WEEK, *common
               ).returncode == 0
    mailed = cli("email", str(listings), "--week", WEEK, *common, "--eml")
    assert mailed.returncode == 0, mailed.stderr
    assert "Paper 2026W47n0" in mailed.stdout

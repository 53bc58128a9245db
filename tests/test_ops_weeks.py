"""Weeks from dates (issue 11, point 5): a paper belongs to the ISO week of its listing
date; --week takes only that week's; --catch-up writes missed weeks oldest first."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from pathlib import Path

import pytest

from digest.weeks import resolve_week
from tests.opsrun import cli, issue_papers, published, week_listing


def test_week_last_is_the_last_complete_week():
    assert resolve_week("last", dt.date(2026, 11, 23)) == "2026-W47"  # a Monday
    assert resolve_week("last", dt.date(2026, 1, 1)) == "2025-W52"
    assert resolve_week(None, dt.date(2026, 11, 23)) == "2026-W48"


def test_a_three_week_catch_up_writes_each_week_once_oldest_first(tmp_path):
    folder, out = tmp_path / "in", tmp_path / "out"
    for week, count in (("2026-W45", 5), ("2026-W46", 6), ("2026-W47", 7)):
        week_listing(folder, week, count)
    args = ["--state", str(tmp_path / "s.sqlite"), "--out", str(out), "--backend", "offline"]
    result = cli("newsletter", str(folder), "--catch-up", "--week", "2026-W47", *args,
                 "--report", str(tmp_path / "report.json"))
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    assert [(issue["week"], issue["counts"]["papers_unique"]) for issue in report["issues"]] == [
        ("2026-W45", 5), ("2026-W46", 6), ("2026-W47", 7)]  # every week, not the last only
    assert report["issues"][0]["outputs"]["markdown"] == str(out / "2026-W45.md")
    assert result.stdout.split() == [str(out / f"2026-W4{n}.md") for n in (5, 6, 7)]
    assert [issue_papers((out / f"2026-W4{n}.md").read_text()) for n in (5, 6, 7)] == [5, 6, 7]
    assert {week: len(ids) for week, ids in published(tmp_path / "s.sqlite").items()} == {
        "2026-W45": 5, "2026-W46": 6, "2026-W47": 7}
    again = cli("newsletter", str(folder), "--catch-up", "--week", "2026-W47", *args)
    assert again.returncode == 0 and "nothing to catch up" in again.stdout


def test_an_earlier_week_re_run_after_later_ones_keeps_its_papers_and_changes_no_later_issue(
        tmp_path):
    folder, out, args = _two_weeks(tmp_path, 6)
    w46, w47 = (out / "2026-W46.md").read_bytes(), (out / "2026-W47.md").read_bytes()
    week_listing(folder, "2026-W48", 3)  # the listings folder grew
    rerun = cli("newsletter", str(folder), "--week", "2026-W46", *args)
    assert rerun.returncode == 0, rerun.stderr
    assert (out / "2026-W46.md").read_bytes() == w46
    assert (out / "2026-W47.md").read_bytes() == w47
    assert issue_papers(w47.decode()) == 4
    assert cli("newsletter", str(folder), "--week", "2026-W48", *args).returncode == 0
    assert issue_papers((out / "2026-W48.md").read_text()) == 3


def test_a_file_named_like_an_issue_of_no_real_week_is_passed_over_not_fatal(tmp_path):
    """"2026-W60.md" in the output folder (no year has week 60) stopped every run with
    "week '2026-W60': 2026 has no week 60 (set by --week)", exit 2, after the issue was
    written and its papers recorded: no index, feed or history, and the mail never sent."""
    folder, out = tmp_path / "in", tmp_path / "out"
    week_listing(folder, "2026-W47", 4)
    out.mkdir()
    for stray in ("2026-W60.md", "2026-W00.md", "2025-W53.md"):  # 2025 has no week 53 either
        (out / stray).write_text("not ours\n")
    args = ["--state", str(tmp_path / "s.sqlite"), "--out", str(out), "--backend", "offline"]
    result = cli("newsletter", str(folder), "--week", "2026-W47", *args)
    assert result.returncode == 0, result.stderr
    assert "2025-W53.md, 2026-W00.md, 2026-W60.md" in result.stderr  # named once, passed over
    index = (out / "index.md").read_text()
    assert "2026-W47" in index and "W60" not in index and "W00" not in index
    assert "2026-W47" in (out / "feed.xml").read_text()
    again = cli("newsletter", str(folder), "--week", "2026-W47", *args)
    assert again.returncode == 0, again.stderr


def _ingest(tmp_path, listing) -> None:
    kept = cli("ingest", "-", "--state", str(tmp_path / "s.sqlite"),
               stdin=listing.read_text(encoding="utf-8"))
    assert kept.returncode == 0, kept.stderr


def test_a_listing_mail_dated_in_a_week_already_out_goes_into_the_next_issue(tmp_path):
    """An arXiv mail sent after Monday's run carries papers of the week before, whose issue
    is out: they stayed in the inbox for good, no issue took them and no run said so (a
    probe, stop 28). The inbox's promise is "the next newsletter includes them, once"."""
    out = tmp_path / "out"
    args = ["--state", str(tmp_path / "s.sqlite"), "--out", str(out), "--backend", "offline"]
    _ingest(tmp_path, week_listing(tmp_path / "mail", "2026-W47", 3))
    assert cli("newsletter", "--week", "2026-W47", *args).returncode == 0
    _ingest(tmp_path, week_listing(tmp_path / "mail", "2026-W47", 2, tag="late"))  # W47 is out
    _ingest(tmp_path, week_listing(tmp_path / "mail", "2026-W48", 4))

    w48 = cli("newsletter", "--week", "2026-W48", *args)
    assert w48.returncode == 0, w48.stderr
    assert "2 records of the inbox are dated in weeks whose issue is out (2026-W47)" in w48.stderr
    assert issue_papers((out / "2026-W48.md").read_text()) == 6
    assert {week: len(ids) for week, ids in published(tmp_path / "s.sqlite").items()} == {
        "2026-W47": 3, "2026-W48": 6}
    again = cli("newsletter", "--week", "2026-W48", *args)  # a re-run keeps them
    assert again.returncode == 0 and issue_papers((out / "2026-W48.md").read_text()) == 6
    earlier = cli("newsletter", "--week", "2026-W47", *args)  # and W47's re-run does not
    assert earlier.returncode == 0 and issue_papers((out / "2026-W47.md").read_text()) == 3


def test_a_late_listing_alone_makes_a_catch_up_write_the_week_after_the_last_issue(tmp_path):
    out = tmp_path / "out"
    args = ["--state", str(tmp_path / "s.sqlite"), "--out", str(out), "--backend", "offline"]
    _ingest(tmp_path, week_listing(tmp_path / "mail", "2026-W47", 3))
    assert cli("newsletter", "--week", "2026-W47", *args).returncode == 0
    _ingest(tmp_path, week_listing(tmp_path / "mail", "2026-W47", 2, tag="late"))
    caught_up = cli("newsletter", "--catch-up", "--week", "2026-W48", *args)
    assert caught_up.returncode == 0, caught_up.stderr
    assert issue_papers((out / "2026-W48.md").read_text()) == 2  # the first week still open
    assert "nothing to catch up" not in caught_up.stdout


def test_a_week_to_come_is_refused_before_anything_is_written(tmp_path):
    """`--week 2027-W10` published a "no papers this week" issue for March 2027, and every
    later --catch-up then said "nothing to catch up" (a probe, stop 28)."""
    folder, out = tmp_path / "in", tmp_path / "out"
    week_listing(folder, "2026-W47", 3)
    args = ["--state", str(tmp_path / "s.sqlite"), "--out", str(out), "--backend", "offline"]
    ahead = resolve_week(None, dt.date.today() + dt.timedelta(days=7))  # next week too
    result = cli("newsletter", str(folder), "--week", ahead, *args)
    assert result.returncode == 2, result.stderr
    assert f"week {ahead} is a week to come" in result.stderr and "(set by --week" in result.stderr
    assert not out.exists() and not (tmp_path / "s.sqlite").exists()
    assert cli("newsletter", str(folder), "--week", resolve_week(None), *args).returncode == 0


def test_a_re_run_of_a_published_week_takes_no_late_records(tmp_path):
    """Re-running W47 (already out, already mailed) took a late W46 mail's papers, which then
    reached no mailbox: "already sent" (a probe, stop 28). A re-run keeps its papers; the
    late ones wait for the next new week."""
    out = tmp_path / "out"
    args = ["--state", str(tmp_path / "s.sqlite"), "--out", str(out), "--backend", "offline"]
    _ingest(tmp_path, week_listing(tmp_path / "mail", "2026-W46", 2))
    _ingest(tmp_path, week_listing(tmp_path / "mail", "2026-W47", 3))
    assert cli("newsletter", "--week", "2026-W46", *args).returncode == 0
    assert cli("newsletter", "--week", "2026-W47", *args).returncode == 0
    _ingest(tmp_path, week_listing(tmp_path / "mail", "2026-W46", 2, tag="late"))
    again = cli("newsletter", "--week", "2026-W47", *args)
    assert again.returncode == 0, again.stderr
    assert issue_papers((out / "2026-W47.md").read_text()) == 3
    nxt = cli("newsletter", "--week", "2026-W48", *args)
    assert nxt.returncode == 0, nxt.stderr
    assert issue_papers((out / "2026-W48.md").read_text()) == 2


def test_each_week_of_a_catch_up_reports_what_the_profile_left_out(tmp_path):
    """A --catch-up with a profile: the report's relevance block was the last week's only, and
    the papers it excluded in the weeks before were nowhere (a probe, stop 28)."""
    folder, out = tmp_path / "in", tmp_path / "out"
    for week in ("2026-W45", "2026-W46", "2026-W47"):
        week_listing(folder, week, 4)
    config = tmp_path / "digest.toml"
    config.write_text('[profile]\nexclude = ["topic 0"]\n', encoding="utf-8")
    result = cli("newsletter", str(folder), "--catch-up", "--week", "2026-W47", "--config",
                 str(config), "--state", str(tmp_path / "s.sqlite"), "--out", str(out),
                 "--backend", "offline", "--report", str(tmp_path / "report.json"))
    assert result.returncode == 0, result.stderr
    issues = json.loads((tmp_path / "report.json").read_text())["issues"]
    assert [issue["relevance"]["papers_excluded"] for issue in issues] == [1, 1, 1]
    assert all("topic 0" in issue["relevance"]["excluded"][0]["title"] for issue in issues)


def _late_file_args(tmp_path, *extra: str) -> list[str]:
    return ["--state", str(tmp_path / "s.sqlite"), "--out", str(tmp_path / "out"),
            "--backend", "offline", "--report", str(tmp_path / "report.json"), *extra]


def _report(tmp_path) -> dict:
    return json.loads((tmp_path / "report.json").read_text())


def test_a_listing_file_dated_in_a_week_already_out_goes_into_the_next_issue_once(tmp_path):
    """`late.json`, dated last week, came on Tuesday into the folder cron reads every Monday:
    its papers were counted in `records_other_weeks` week after week and no issue ever took
    them (a probe, stop 28). Like a late mail: the next new issue takes them, once, and says
    so; a re-run of either published week afterwards gives the same bytes."""
    folder, out, args = tmp_path / "listings", tmp_path / "out", _late_file_args(tmp_path)
    week_listing(folder, "2026-W45", 3)
    assert cli("newsletter", str(folder), "--week", "2026-W45", *args).returncode == 0
    w45 = (out / "2026-W45.md").read_bytes()
    week_listing(folder, "2026-W45", 2, tag="late")  # Tuesday: W45's issue is out
    week_listing(folder, "2026-W46", 4)
    w46 = cli("newsletter", str(folder), "--week", "2026-W46", *args)
    assert w46.returncode == 0, w46.stderr
    assert ("2 records of the listings are dated in weeks whose issue is out (2026-W45)"
            in w46.stderr)
    assert issue_papers((out / "2026-W46.md").read_text()) == 6
    assert _report(tmp_path)["records_other_weeks"] == 3  # W45's own, published then
    assert {week: len(ids) for week, ids in published(tmp_path / "s.sqlite").items()} == {
        "2026-W45": 3, "2026-W46": 6}
    w46_bytes = (out / "2026-W46.md").read_bytes()

    for week, before in (("2026-W45", w45), ("2026-W46", w46_bytes)):  # re-runs after it
        again = cli("newsletter", str(folder), "--week", week, *args)
        assert again.returncode == 0, again.stderr
        assert (out / f"{week}.md").read_bytes() == before, week

    week_listing(folder, "2026-W47", 1)
    w47 = cli("newsletter", str(folder), "--week", "2026-W47", *args)
    assert w47.returncode == 0, w47.stderr
    assert "whose issue is out" not in w47.stderr
    assert issue_papers((out / "2026-W47.md").read_text()) == 1  # taken once, not again


def test_a_failed_rerun_of_a_published_week_leaves_its_late_file_to_the_next_issue(tmp_path):
    """The store took a re-run's record of what it read before the re-run's issue was out: a
    re-run of W45 that failed while rendering (a broken HTML template) left W45's issue with its
    3 papers while the store said W45's run had read the late file, and W46 never took it: two
    papers in no issue, without a warning (a probe, this stop). What a run read now changes
    with its issue, in the same transaction."""
    folder, args = tmp_path / "listings", _late_file_args(tmp_path)
    week_listing(folder, "2026-W45", 3)
    assert cli("newsletter", str(folder), "--week", "2026-W45", *args).returncode == 0
    week_listing(folder, "2026-W45", 2, tag="late")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "issue.html.j2").write_text("<p>{{ issue.no_such_thing }}</p>\n")
    failed = cli("newsletter", str(folder), "--week", "2026-W45", "--templates", str(broken),
                 "--formats", "md,html", *args)
    assert failed.returncode == 1, failed.stderr
    week_listing(folder, "2026-W46", 2)
    w46 = cli("newsletter", str(folder), "--week", "2026-W46", *args)
    assert w46.returncode == 0, w46.stderr
    assert "whose issue is out (2026-W45)" in w46.stderr
    assert {week: len(ids) for week, ids in published(tmp_path / "s.sqlite").items()} == {
        "2026-W45": 3, "2026-W46": 4}


def test_a_late_listing_file_alone_makes_a_catch_up_write_the_week_after_the_last_issue(
        tmp_path):
    folder, out, args = tmp_path / "listings", tmp_path / "out", _late_file_args(tmp_path)
    week_listing(folder, "2026-W45", 3)
    assert cli("newsletter", str(folder), "--week", "2026-W45", *args).returncode == 0
    week_listing(folder, "2026-W45", 2, tag="late")
    caught_up = cli("newsletter", str(folder), "--catch-up", "--week", "2026-W46", *args)
    assert caught_up.returncode == 0, caught_up.stderr
    assert issue_papers((out / "2026-W46.md").read_text()) == 2


def test_a_record_the_profile_excluded_in_its_own_week_is_not_pulled_into_a_later_issue(
        tmp_path):
    """Only a record no run of its week read is late: one that week's run left out by the
    reader's profile was considered, and stays out."""
    folder, out = tmp_path / "listings", tmp_path / "out"
    config = tmp_path / "digest.toml"
    config.write_text('[profile]\nexclude = ["topic 0"]\n', encoding="utf-8")
    args = _late_file_args(tmp_path, "--config", str(config))
    week_listing(folder, "2026-W45", 4)
    assert cli("newsletter", str(folder), "--week", "2026-W45", *args).returncode == 0
    assert _report(tmp_path)["relevance"]["papers_excluded"] == 1
    week_listing(folder, "2026-W46", 2, tag="b")  # topics 0 and 1
    w46 = cli("newsletter", str(folder), "--week", "2026-W46", *args)
    assert w46.returncode == 0, w46.stderr
    assert "whose issue is out" not in w46.stderr
    assert issue_papers((out / "2026-W46.md").read_text()) == 1
    assert _report(tmp_path)["relevance"]["papers_excluded"] == 1  # W48's own, not W47's
    assert _report(tmp_path)["records_other_weeks"] == 4


def test_a_record_cut_by_max_papers_in_its_own_week_is_not_pulled_into_a_later_issue(tmp_path):
    """A paper past --max-papers (left out with --no-rest) was cut and counted in its week's
    report: that was its week's choice, not a late arrival."""
    folder, out = tmp_path / "listings", tmp_path / "out"
    args = _late_file_args(tmp_path, "--max-papers", "2", "--no-rest")
    week_listing(folder, "2026-W45", 5)
    assert cli("newsletter", str(folder), "--week", "2026-W45", *args).returncode == 0
    assert issue_papers((out / "2026-W45.md").read_text()) == 2
    week_listing(folder, "2026-W46", 1)
    w46 = cli("newsletter", str(folder), "--week", "2026-W46", *args)
    assert w46.returncode == 0, w46.stderr
    assert "whose issue is out" not in w46.stderr
    assert issue_papers((out / "2026-W46.md").read_text()) == 1
    assert _report(tmp_path)["records_other_weeks"] == 5


def test_an_issue_published_before_the_store_kept_what_it_read_lends_no_late_records(tmp_path):
    """An issue from before the store kept what each run read cannot tell a late record from
    one its run left out: its week's records stay counted, so no history folder is ever pulled
    into the next issue after an upgrade."""
    folder, out, args = tmp_path / "listings", tmp_path / "out", _late_file_args(tmp_path)
    week_listing(folder, "2026-W45", 3)
    assert cli("newsletter", str(folder), "--week", "2026-W45", *args).returncode == 0
    with sqlite3.connect(tmp_path / "s.sqlite") as db:  # as an older digest left it
        assert db.execute("DELETE FROM considered").rowcount == 3
    week_listing(folder, "2026-W45", 2, tag="late")
    week_listing(folder, "2026-W46", 4)
    w46 = cli("newsletter", str(folder), "--week", "2026-W46", *args)
    assert w46.returncode == 0, w46.stderr
    assert "whose issue is out" not in w46.stderr
    assert issue_papers((out / "2026-W46.md").read_text()) == 4
    assert _report(tmp_path)["records_other_weeks"] == 5


def test_a_paper_listed_again_under_a_title_it_was_also_listed_as_is_known_as_published(
        tmp_path):
    """Week 46 merged "Sparse Mixture Routing for Efficient Speech Recognition" (with its arXiv
    id) and the same paper listed without the id as "... Efficient Streaming Speech
    Recognition", shown "also listed as"; week 47's listing of the second title went out
    again as a new paper: the store knew only the id and the first title (a probe, this
    stop; 19 papers over ten weeks of the arXiv sample)."""
    abstract = ("We route each frame of speech to a sparse mixture of experts chosen by a "
                "learned gate, and halve the cost of streaming recognition at equal word error "
                "rate on three public benchmarks.")
    other = ("Graph neural networks predict the folding pathways of small proteins from their "
             "contact maps, and we release a benchmark of ten thousand folding trajectories.")
    listings = tmp_path / "in"
    listings.mkdir()
    (listings / "w46.jsonl").write_text("\n".join(json.dumps(record) for record in [
        {"id": "2611.01234", "title": "Sparse Mixture Routing for Efficient Speech Recognition",
         "abstract": abstract, "date": "2026-11-10"},
        {"title": "Sparse Mixture Routing for Efficient Streaming Speech Recognition",
         "abstract": abstract, "date": "2026-11-11"},
        {"title": "Folding Pathways from Contact Maps", "abstract": other,
         "date": "2026-11-12"}]) + "\n", encoding="utf-8")
    (listings / "w47.jsonl").write_text(json.dumps(
        {"title": "Sparse Mixture Routing for Efficient Streaming Speech Recognition",
         "abstract": abstract, "date": "2026-11-17"}) + "\n", encoding="utf-8")
    common = ["--backend", "offline", "--state", str(tmp_path / "s.sqlite"),
              "--out", str(tmp_path / "out"), "--report", str(tmp_path / "r.json")]
    assert cli("newsletter", str(listings), "--week", "2026-W46", *common).returncode == 0
    assert "also listed as" in (tmp_path / "out" / "2026-W46.md").read_text(encoding="utf-8")
    assert cli("newsletter", str(listings), "--week", "2026-W47", *common).returncode == 0
    counts = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["counts"]
    assert (counts["papers_in_issue"], counts["already_published"]) == (0, 1)


def test_each_week_of_a_catch_up_reports_whether_it_was_degraded(tmp_path, monkeypatch):
    """A catch-up whose first week was summarised partly offline reported `llm.degraded:
    false`: the report's `llm` is the last week's, and `issues` carried no LLM block (a
    probe, this stop)."""
    from tests.fake_openai import FakeOpenAI, Reply

    def first_week_fails(body: dict) -> Reply | None:  # type: ignore[type-arg]
        return Reply(status=400, error={"message": "no"}) if "2026W46" in json.dumps(body) else None

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    listings = tmp_path / "in"
    week_listing(listings, "2026-W46", 4)
    week_listing(listings, "2026-W47", 4)
    report = tmp_path / "r.json"
    with FakeOpenAI(responder=first_week_fails) as server:
        made = cli("newsletter", str(listings), "--catch-up", "--week", "2026-W47", "--backend",
                   "openai", "--base-url", server.url, "--timeout", "5", "--state",
                   str(tmp_path / "s.sqlite"), "--out", str(tmp_path / "out"), "--report",
                   str(report))
    assert made.returncode == 0, made.stderr
    issues = json.loads(report.read_text(encoding="utf-8"))["issues"]
    assert [(issue["week"], issue["llm"]["degraded"]) for issue in issues] == [
        ("2026-W46", True), ("2026-W47", False)]
    assert issues[0]["llm"]["fallback_themes"]


def _two_weeks(tmp_path: Path, first: int = 5) -> tuple[Path, Path, list[str]]:
    """Listings of 2026-W46 (``first`` papers) and W47 (4), each week's issue published."""
    folder, out = tmp_path / "in", tmp_path / "out"
    week_listing(folder, "2026-W46", first)
    week_listing(folder, "2026-W47", 4)
    args = ["--state", str(tmp_path / "s.sqlite"), "--out", str(out), "--backend", "offline"]
    for week in ("2026-W46", "2026-W47"):
        assert cli("newsletter", str(folder), "--week", week, *args).returncode == 0
    return folder, out, args


def test_a_re_run_whose_listings_lost_papers_of_the_published_issue_changes_nothing(tmp_path):
    """Re-running a published week after its listing had gone (rotated, overwritten) replaced
    the issue with "No papers this week", exit 0 and no word: the index said 0 papers, and
    the mail of that week would have sent the empty issue (a probe, stop 32)."""
    folder, out, args = _two_weeks(tmp_path)
    before = {path.name: path.read_bytes() for path in out.iterdir()}
    state = tmp_path / "s.sqlite"
    papers = published(state)
    (folder / "2026-W46.jsonl").write_text(
        "\n".join((folder / "2026-W46.jsonl").read_text().splitlines()[:2]) + "\n")
    rerun = cli("newsletter", str(folder), "--week", "2026-W46", *args)
    assert rerun.returncode == 1, rerun.stderr
    assert ("the issue of 2026-W46 published 5 papers, and this run's would leave out 3 of "
            "them") in rerun.stderr
    assert "Paper 2026W46n2" in rerun.stderr  # one of them named
    assert {path.name: path.read_bytes() for path in out.iterdir()} == before
    assert published(state) == papers
    (folder / "2026-W46.jsonl").unlink()
    gone = cli("newsletter", str(folder), "--week", "2026-W46", *args)
    assert gone.returncode == 1 and "would leave out 5 of them" in gone.stderr
    assert {path.name: path.read_bytes() for path in out.iterdir()} == before


def test_the_index_and_feed_list_the_issues_the_store_published_in_the_folder(tmp_path):
    """index.md and feed.xml listed whatever ``YYYY-Www.md`` files the folder held: an issue
    deleted by hand left both without a word, and a file digest never wrote ("not an issue")
    became an issue of the index and an entry of the feed (a probe, stop 32)."""
    folder, out, args = _two_weeks(tmp_path)
    (out / "2026-W46.md").unlink()
    (out / "2026-W30.md").write_text("not an issue\n")
    week_listing(folder, "2026-W48", 3)
    result = cli("newsletter", str(folder), "--week", "2026-W48", *args)
    assert result.returncode == 0, result.stderr
    assert ("2026-W30.md: no issue digest published here; left out of index.md and "
            "feed.xml") in result.stderr
    assert "2026-W46.md: published here but missing" in result.stderr
    index, feed = (out / "index.md").read_text(), (out / "feed.xml").read_text()
    assert "2026-W30" not in index and "2026-W30" not in feed
    assert "2026-W47" in index and "2026-W48" in feed


def test_an_output_folder_inside_the_listings_is_never_read_back_without_its_history(tmp_path):
    """With ``--out`` inside the listings folder and its ``.history.json`` lost, the next run
    read the folder's own feed.xml as a listing: two "Research digest, 2026-W45" entries
    became papers of the next issue and were marked published (a probe, stop 32)."""
    folder = tmp_path / "in"
    out = folder / "out"
    week_listing(folder, "2026-W45", 4)
    week_listing(folder, "2026-W46", 4)
    args = ["--state", str(tmp_path / "s.sqlite"), "--out", str(out), "--backend", "offline",
            "--formats", "md,html,txt"]
    assert cli("newsletter", str(folder), "--week", "2026-W45", *args).returncode == 0
    (out / ".history.json").unlink()
    result = cli("newsletter", str(folder), "--week", "2026-W46", *args)
    assert result.returncode == 0, result.stderr
    assert "Research digest, 2026-W45" not in (out / "2026-W46.md").read_text()
    assert issue_papers((out / "2026-W46.md").read_text()) == 4


def _lab_record(**extra: str) -> str:
    return json.dumps({"title": "ToolWeaver: Compositional Tool Graphs for Planning Agents",
                       "abstract": "We plan tool calls as a typed graph and run independent "
                                   "branches in parallel; a repair module rewrites only the "
                                   "failed subgraph. Tool calls fall by a third on a made-up "
                                   "benchmark of multi-step tasks.",
                       "date": "2026-11-17", **extra}) + "\n"


@pytest.mark.parametrize("first_with_id", [False, True])
def test_a_re_run_keeps_a_paper_listed_with_its_arxiv_id_one_time_and_without_it_another(
        tmp_path, first_with_id):
    """The re-run check compared ids: a published title-only paper that a late file listed
    again with its arXiv id (or the other way round) read as "left out", and the re-run of
    its week was refused although the listings only grew (a re-probe, stop 32)."""
    folder, out = tmp_path / "in", tmp_path / "out"
    week_listing(folder, "2026-W47", 3)
    first, second = ("with.jsonl", "without.jsonl") if first_with_id else (
        "without.jsonl", "with.jsonl")
    folder.joinpath("with.jsonl" if first_with_id else "without.jsonl").write_text(
        _lab_record(**({"id": "2411.01234"} if first_with_id else {})))
    args = ["--state", str(tmp_path / "s.sqlite"), "--out", str(out), "--backend", "offline",
            "--week", "2026-W47"]
    assert cli("newsletter", str(folder), *args).returncode == 0
    before = (out / "2026-W47.md").read_text()
    folder.joinpath(first).unlink()
    folder.joinpath(second).write_text(
        _lab_record(**({} if first_with_id else {"id": "2411.01234"})))
    rerun = cli("newsletter", str(folder), *args)
    assert rerun.returncode == 0, rerun.stderr
    assert issue_papers((out / "2026-W47.md").read_text()) == issue_papers(before) == 4

"""The output folder: each issue's files, the archive index and the Atom feed.

``publish`` writes, each file atomically (temp file, fsync, rename)::

    OUT/<YYYY-Www>.md      the issue (always), and .html / .txt on request
    OUT/index.md           every issue published in the folder, newest first
    OUT/feed.xml           Atom feed of the latest issues, for feed readers
    OUT/.history.json      what each issue held (themes and their sizes, TL;DR):
                           the memory behind "rising themes", the index and the feed

The history lives beside the issues rather than in the state store so that an
output folder is self-contained: copy it elsewhere and its index, feed and
rising themes keep working. Nothing here reads a clock: the same inputs give the
same bytes (a feed entry's ``updated`` is the last day of its week).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from .errors import ConfigError, StateError
from .files import write_atomic
from .models import Issue
from .render import (
    FORMATS,
    PastIssue,
    PastTheme,
    Renderer,
    Trusted,
    issue_view,
    one_line,
    past_themes,
    safe_url,
)
from .weeks import date_range, is_week, parse_week

logger = logging.getLogger("digest.outputs")

HISTORY = ".history.json"
HISTORY_VERSION = 1
FEED_ENTRIES = 20
INDEX_THEMES = 3
REPORT_KEYS = {"md": "markdown", "html": "html", "txt": "text"}
_WEEK = re.compile(r"^\d{4}-W\d{2}$")
_ISSUE_FILE = re.compile(r"^(\d{4}-W\d{2})\.md$")
# write_atomic's temp files: "." + the file's name + "." + mkstemp's 8 random characters.
_LEFTOVER = re.compile(r"^\.(\d{4}-W\d{2}\.(md|html|txt)|index\.md|feed\.xml|\.history\.json)"
                       r"\.[a-z0-9_]{8}$")


@dataclass(frozen=True)
class HistoryEntry:
    """What ``.history.json`` keeps of one issue: plain, unescaped text."""

    week: str
    papers: int
    intro: str
    themes: tuple[PastTheme, ...]
    tldr: tuple[tuple[str, str], ...]  # (theme, text)

    def past(self) -> PastIssue:
        return PastIssue(self.week, self.papers, self.themes)


@dataclass(frozen=True)
class ArchiveEntry:
    """One issue as the index and the feed show it (hrefs are relative to the folder)."""

    week: str
    title: str
    dates: str
    updated: str
    md_href: Trusted
    html_href: Trusted | None
    txt_href: Trusted | None
    href: Trusted  # the best page to read it: HTML when written, else Markdown
    id: Trusted
    papers: int | None
    intro: str
    themes: tuple[str, ...]
    tldr: tuple[tuple[str, str], ...]


def parse_formats(value: str | Sequence[str] | None) -> tuple[str, ...]:
    """``"md,html"`` → ``("md", "html")``; Markdown is always written, and written first."""
    names = value.split(",") if isinstance(value, str) else list(value or [])
    wanted = {name.strip().lower() for name in names if name.strip()}
    unknown = sorted(wanted - set(FORMATS))
    if unknown:
        raise ConfigError(f"formats: unknown format {', '.join(unknown)}; choose from "
                          f"{', '.join(FORMATS)} (comma-separated, e.g. md,html,txt)",
                          setting="formats")
    return tuple(fmt for fmt in FORMATS if fmt == "md" or fmt in wanted)


def publish(issue: Issue, out_dir: Path, *, formats: Iterable[str] = ("md",),
            renderer: Renderer | None = None, site_url: str | None = None) -> dict[str, Path]:
    """Write ``issue`` in ``formats``, then the history, index and feed; return the paths
    keyed as in the run report's ``outputs`` (markdown, html, text, index, feed)."""
    out = Path(out_dir)
    renderer = renderer or Renderer()
    history = load_history(out)
    files = render_issue(issue, out, formats=formats, renderer=renderer, history=history)
    history[issue.week] = history_entry(issue)
    files.update(render_archive(out, history, renderer=renderer, site_url=site_url, also=files))
    write_files(out, files)
    save_history(out, history)
    return {_report_key(path): path for path in files}


def render_issue(issue: Issue, out: Path, *, formats: Iterable[str], renderer: Renderer,
                 history: dict[str, HistoryEntry]) -> dict[Path, str]:
    """The issue's own files, rendered in memory: a broken template changes no file."""
    earlier = past_issues(history)
    return {out / f"{issue.week}.{fmt}": renderer.render(issue, fmt, history=earlier)
            for fmt in parse_formats(list(formats))}


def render_archive(out: Path, history: dict[str, HistoryEntry], *, renderer: Renderer,
                   site_url: str | None, also: Iterable[Path] = (),
                   published: Collection[str] = ()) -> dict[Path, str]:
    """index.md and feed.xml for every issue published in ``out`` (see ``archive``)."""
    base = feed_base(site_url)
    entries = archive(out, history, base, also=also, published=published)
    if not entries:
        return {}
    return {
        out / "index.md": renderer.page("index.md.j2", entries=entries),
        out / "feed.xml": renderer.page(
            "feed.xml.j2", entries=entries[:FEED_ENTRIES], base=base,
            feed_id=Trusted(f"{base}feed.xml" if base else "urn:digest:feed"),
            updated=Trusted(max(entry.updated for entry in entries)))}


def write_files(out: Path, files: dict[Path, str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for path, text in files.items():
        write_atomic(path, text)
    logger.info("wrote %s", ", ".join(str(path) for path in files))


def remove_leftovers(out: Path) -> list[Path]:
    """Remove the temp files a killed run left (``.<name>.<random>`` beside our files)."""
    if not out.is_dir():
        return []
    gone = [path for path in out.iterdir() if _LEFTOVER.match(path.name)]
    for path in gone:
        path.unlink(missing_ok=True)
    if gone:
        logger.warning("removed %d temp file(s) a killed run left in %s", len(gone), out)
    return gone


def _report_key(path: Path) -> str:
    """The run report's name for a file: markdown, html, text, index or feed."""
    if path.name in ("index.md", "feed.xml"):
        return path.stem
    return REPORT_KEYS[path.suffix.lstrip(".")]


def feed_base(site_url: str | None) -> Trusted | None:
    """The public URL of the output folder, ending in '/', or None when not given."""
    if not site_url:
        return None
    url = safe_url(site_url)
    if url is None:
        raise ConfigError(f"site URL {site_url!r}: expected an http(s) URL such as "
                          "https://example.org/digest/", setting="site_url")
    return Trusted(url if url.endswith("/") else url + "/")


def history_to_json(entry: HistoryEntry) -> dict[str, Any]:
    return _entry_to_json(entry)


def history_from_json(item: dict[str, Any]) -> HistoryEntry:
    return _entry_from_json(item)


def history_entry(issue: Issue) -> HistoryEntry:
    """What the history keeps of ``issue``: one-line text, safe to write as UTF-8."""
    view = issue_view(issue)
    return HistoryEntry(
        week=issue.week, papers=sum(len(s.papers) for s in issue.sections),
        intro=one_line(view.intro if view.sections else view.empty_reason),
        themes=tuple(replace(theme, title=one_line(theme.title),
                             keywords=tuple(map(one_line, theme.keywords)))
                     for theme in past_themes(issue)),
        tldr=tuple((one_line(item.theme), one_line(item.text)) for item in view.tldr))


def archive(out: Path, history: dict[str, HistoryEntry], base: str | None, *,
            also: Iterable[Path] = (), published: Collection[str] = ()) -> list[ArchiveEntry]:
    """Every issue digest published in ``out`` (the weeks of ``history``, and ``published``:
    the store's, for an issue from before it kept their history) whose Markdown is there (or
    about to be: ``also``), newest first, with what the history knows of it. A file named like
    an issue that digest did not publish, and an issue whose file is gone, are left out with
    a warning."""
    names = {path.name for path in also}
    if out.is_dir():
        names |= {path.name for path in out.iterdir()}
    named = {m[1] for name in names if (m := _ISSUE_FILE.match(name))}
    weeks = sorted(filter(is_week, named), reverse=True)
    if strays := sorted(named.difference(weeks)):
        logger.warning("%s: %s named like an issue of a week no year has; passed over (digest "
                       "wrote none of them: rename or move them)", out,
                       ", ".join(f"{week}.md" for week in strays))
    ours = [week for week in weeks if week in history or week in published]
    if unknown := sorted(set(weeks).difference(ours)):
        logger.warning("%s: no issue digest published here; left out of index.md and feed.xml "
                       "(rename or move it)",
                       ", ".join(str(out / f"{week}.md") for week in unknown))
    if missing := sorted(set(history).union(published).difference(weeks)):
        logger.warning("%s: published here but missing; index.md and feed.xml leave it out "
                       "until it is back (restore it, or re-run its week with its listings)",
                       ", ".join(str(out / f"{week}.md") for week in missing))
    return [archive_entry(week, names, history.get(week), base) for week in ours]


def archive_entry(week: str, names: set[str], known: HistoryEntry | None,
                  base: str | None) -> ArchiveEntry:
    start, end = parse_week(week)
    dates = date_range(start, end)
    html = Trusted(f"{week}.html") if f"{week}.html" in names else None
    txt = Trusted(f"{week}.txt") if f"{week}.txt" in names else None
    md = Trusted(f"{week}.md")
    return ArchiveEntry(
        week=week, title=f"Research digest, {week} ({dates})", dates=dates,
        updated=f"{end.isoformat()}T00:00:00Z", md_href=md, html_href=html, txt_href=txt,
        href=html or md, id=Trusted(f"{base}{md}" if base else f"urn:digest:issue:{week}"),
        papers=known.papers if known else None, intro=known.intro if known else "",
        themes=tuple(t.title for t in known.themes[:INDEX_THEMES]) if known else (),
        tldr=known.tldr if known else ())


def past_issues(history: dict[str, HistoryEntry]) -> list[PastIssue]:
    """What "rising themes" compares with (the renderer keeps only weeks before the issue's)."""
    return [entry.past() for entry in history.values()]


def load_history(out: Path) -> dict[str, HistoryEntry]:
    """The history of ``out`` by week; empty when the folder has none yet."""
    path = out / HISTORY
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _bad_history(path, str(exc)) from None
    try:
        if data.get("version") != HISTORY_VERSION:
            raise _bad_history(path, f"version {data.get('version')!r}, expected "
                                     f"{HISTORY_VERSION}")
        entries = [_entry_from_json(item) for item in data["issues"]]
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise _bad_history(path, f"unexpected content ({type(exc).__name__}: {exc})") from None
    return {entry.week: entry for entry in entries}


def save_history(out: Path, history: dict[str, HistoryEntry]) -> None:
    issues = [_entry_to_json(history[week]) for week in sorted(history)]
    text = json.dumps({"version": HISTORY_VERSION, "issues": issues}, indent=1,
                      ensure_ascii=False, sort_keys=True)
    write_atomic(out / HISTORY, text + "\n")


def _entry_to_json(entry: HistoryEntry) -> dict[str, Any]:
    data = asdict(entry)
    data["tldr"] = [{"theme": theme, "text": text} for theme, text in entry.tldr]
    for theme, item in zip(entry.themes, data["themes"], strict=True):
        item["terms"] = dict(theme.terms)  # term -> weight: what rising themes match on
    return data


def _entry_from_json(item: dict[str, Any]) -> HistoryEntry:
    week = str(item["week"])
    if not _WEEK.match(week):
        raise ValueError(f"week {week!r} is not like 2026-W47")
    return HistoryEntry(
        week=week, papers=int(item["papers"]), intro=str(item["intro"]),
        themes=tuple(PastTheme(str(t["title"]), tuple(map(str, t["keywords"])), int(t["papers"]),
                               _terms(t.get("terms", {})))
                     for t in item["themes"]),
        tldr=tuple((str(t["theme"]), str(t["text"])) for t in item["tldr"]))


def _terms(value: dict[str, Any]) -> tuple[tuple[str, float], ...]:
    """A theme's term profile as kept (older histories have none: such issues are not
    compared for rising themes)."""
    terms = ((str(term), float(weight)) for term, weight in value.items())
    return tuple(sorted(terms, key=lambda tw: (-tw[1], tw[0])))


def _bad_history(path: Path, problem: str) -> StateError:
    return StateError(f"{path}: cannot read the issue history: {problem} (delete the file to "
                      "start it afresh: index.md and feed.xml are rebuilt from the issues in the "
                      "folder, rising themes start over)")

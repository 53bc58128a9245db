"""What operators see: ``digest status`` and ``digest history`` (also as JSON).

Both only read: the run lock's label (``digest.runlock.holder``, no lock taken) and the
store, opened like any run would (so a damaged store says so here too). Plain text is
one fact a line, for a glance or a log; ``--json`` is for monitoring scripts.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from .errors import StateError
from .runlock import describe, holder
from .state import Store, templates_gone
from .weeks import current_week, parse_week, week_of


def status(state_path: Path) -> dict[str, Any]:
    """Lock holder, pending issues, inbox size, next week, last issue and last sending."""
    with _existing(state_path) as store:
        issues, sendings, pending = store.issues(), store.sendings(), store.pending()
        last = issues[-1] if issues else None
        return {
            "state": str(state_path), "lock_holder": holder(state_path),
            "pending": [week for week, _, _ in pending],
            "pending_blocked": {week: f"made with the templates in {gone}, which are gone: "
                                "restore them" for week, _, payload in pending
                                if (gone := templates_gone(payload))},
            "inbox": store.inbox_size(),
            "next_week": _week_after(last["week"]) if last else current_week(),
            "last_issue": {key: last[key] for key in ("week", "papers", "published_at")}
            if last else None,
            "last_sending": _sending(sendings[-1]) if sendings else None,
            "batch_jobs": [{key: job[key] for key in ("id", "week", "requests", "submitted_at")}
                           for job in store.batch_jobs(pending=True)],
            "inbox_problems": store.inbox_problems(),
        }


def history(state_path: Path) -> list[dict[str, Any]]:
    """Every issue, newest first: week, papers, files, where, when, and whom it was sent to."""
    with _existing(state_path) as store:
        sent: dict[str, list[dict[str, Any]]] = {}
        for sending in store.sendings():
            sent.setdefault(sending["week"], []).append(_sending(sending))
        return [{"week": row["week"], "papers": row["papers"], "out": row["out_dir"],
                 "files": row["files"], "published_at": row["published_at"],
                 "sent": sent.get(row["week"], [])}
                for row in reversed(store.issues())]


def _pending(week: str, data: dict[str, Any]) -> str:
    blocked = data.get("pending_blocked", {}).get(week)
    return f"{week} ({blocked}; the next run then finishes it)" if blocked else (
        f"{week} (the next run finishes it)")


def status_lines(data: dict[str, Any]) -> list[str]:
    last, sending = data["last_issue"], data["last_sending"]
    return [
        f"store:        {data['state']}",
        "run lock:     " + (describe(data["lock_holder"]) if data["lock_holder"] else "free"),
        "pending:      " + (", ".join(_pending(week, data) for week in data["pending"])
                            if data["pending"] else "none"),
        f"inbox:        {data['inbox']} record(s) waiting",
        f"next week:    {data['next_week']}",
        "last issue:   " + (f"{last['week']}, {last['papers']} papers, at "
                            f"{last['published_at']} UTC" if last else "none"),
        "last sending: " + (_sending_line(sending) if sending else "none"),
        "batch jobs:   " + ("; ".join(f"{job['week']} job {job['id']}, {job['requests']} "
                                     f"requests, submitted {job['submitted_at']} UTC"
                                     for job in data["batch_jobs"])
                            + " (the next run of its week collects it; if the server no "
                            "longer has it, the week is asked again: a new job with "
                            "--batch-api, else (or with --resume) directly)"
                            if data["batch_jobs"] else "none pending"),
        "ingest:       " + (f"{len(data['inbox_problems'])} problem(s) since the last issue, "
                            f"the newest: {data['inbox_problems'][-1]}"
                            if data["inbox_problems"] else "no problem since the last issue"),
    ]


def history_lines(rows: list[dict[str, Any]]) -> list[str]:
    if not rows:
        return ["no issue published yet"]
    lines = []
    for row in rows:
        sent = "; ".join(_sending_line(s) for s in row["sent"]) or "not sent"
        lines.append(f"{row['week']}  {row['papers']:>4} papers  {', '.join(row['files'])}  "
                     f"at {row['published_at']} UTC  sent: {sent}")
    return lines


def _existing(state_path: Path) -> Store:
    """The store, without creating one where there is none (a typo in --state)."""
    if not Path(state_path).exists():
        raise StateError(f"{state_path}: no state store here yet (the first `digest newsletter` "
                         "or `digest ingest` creates it); check the path", setting="state")
    return Store(state_path)


def _sending(row: dict[str, Any]) -> dict[str, Any]:
    return {key: row[key] for key in ("week", "message_id", "recipients", "started_at",
                                      "sent_at", "answer")}


def _sending_line(sending: dict[str, Any]) -> str:
    when = (f"at {sending['sent_at']} UTC" if sending["sent_at"]
            else f"UNCONFIRMED since {sending['started_at']}")
    return f"{sending['week']} to {', '.join(sending['recipients'])} {when}"


def _week_after(week: str) -> str:
    return week_of(parse_week(week)[0] + dt.timedelta(days=7))

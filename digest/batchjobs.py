"""A week's LLM calls through the provider's Batch API: submit in one run, collect in a later one.

``batch_step`` runs before a week's issue is built and says whether this run goes on:

* **plan**: the pipeline runs once with the LLM runner in planning mode (``Planner``): it
  lists every first-wave call (each batch summary, the intro) exactly as a real run would ask
  it, minus those already in the cache, answers none and makes no offline answers;
* **submit**: those calls go out as one JSONL file (``digest.llm.batch``), the job is recorded
  in the store (migration 7), and the run stops with exit 0: "submitted, N requests, job …";
* **collect** (the next run of the week, or ``--resume``; a later week's run only says it is not
  collected): while the job runs, the run stops ("still running, N of M done"); once it has
  finished, every answer is put in the LLM cache under its cache key, its tokens go to the
  ledger at the batch rate, and the run goes on along the direct path. There the runner finds
  the answers as cache hits and checks each one exactly like a fresh answer; what is missing (a
  failed line, an expired job) is asked directly, an invalid answer gets the repair request a
  fresh one would, and merges are asked directly: they depend on the batch's answers, are few,
  and a second batch would cost another day. A job the server no longer knows (a 404 on poll
  while its list answers), or whose output or error file it no longer has (a 404 on its content
  while the list of files answers), is forgotten and the week planned again: a new job, or
  (Batch API off, ``--resume``) direct calls.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import ConfigError
from .llm._plan import PlannedCall, Planner
from .llm.batch import (
    BATCH_PRICE_FACTOR,
    FAILED,
    FINISHED,
    GONE,
    Answer,
    BatchClient,
    JobGone,
    prompt_hash,
    read_output,
    requests_jsonl,
)
from .llm.catalog import model_card
from .report import RunReport
from .state import CallRecord, Store
from .testhook import pause_at

if TYPE_CHECKING:
    from .pipeline import Options
    from .run import Digest

logger = logging.getLogger("digest")
# Files and Batches calls (upload, poll, download) when no timeout is set: no generation to
# wait for, but an upload of a few MB on a slow link.
FILES_TIMEOUT_S = 120.0

# "auto" uses the Batch API from this many first-wave calls on. A 5,000-paper week makes 177
# (benchmarks/bench_batch.py, gpt-4o-mini's budget): about 35 papers a call. At concurrency 4 and
# 5-10 s a call, 100 calls take the direct path 2-4 minutes; below that waiting up to a day is not
# worth the saving, above it (a week of ~3,000+ papers, a backfill) direct calls run into rate
# limits for minutes on end and the half price is real money.
AUTO_MIN_CALLS = 100


@dataclass(frozen=True)
class BatchChoice:
    mode: bool | str  # True, False or "auto"
    resume: bool = False  # collect only: never submit a new job
    output_file: Path | None = None  # an output file written elsewhere (vLLM's run_batch)


def batch_mode(value: Any) -> bool | str:
    """The ``batch_api`` setting: true, false or "auto"."""
    if isinstance(value, bool) or value is None:
        return bool(value)
    text = str(value).strip().lower()
    if text in ("auto", "true", "false"):
        return {"true": True, "false": False}.get(text, "auto")
    raise ConfigError(f'batch_api = {value!r}: use true, false or "auto"', setting="batch_api")


def batch_step(digest: Digest, sources: Sequence[str], options: Options, store: Store,
               report: RunReport, *, out: Path, choice: BatchChoice) -> str | None:
    """None: build the issue now (the cache holds what a batch answered); else the line this
    run prints before it stops with exit 0 (submitted, or still running)."""
    pending = store.batch_jobs(options.week, pending=True)
    if choice.output_file is not None:
        planned = plan_calls(digest, sources, options, store, out)
        _fill_cache(store, planned, _file_lines(choice.output_file), report, digest)
        for job in pending:
            store.finish_batch_job(job["id"], "collected", f"from {choice.output_file}")
        return None
    if pending:
        job = pending[-1]
        try:
            with batch_client(digest) as client:
                return _collect(digest, sources, options, store, report, out, job, client)
        except JobGone as gone:
            _forget(store, report, options.week, job, str(gone))
    if choice.resume or choice.mode is False:
        return None
    planning = RunReport()
    planned = plan_calls(digest, sources, options, store, out, planning)
    if not planned or (choice.mode == "auto" and len(planned) < AUTO_MIN_CALLS):
        return None  # the issue is built now, and reports what it read
    _report_reading(report, planning)
    return _submit(digest, store, options.week, planned, report)


def _forget(store: Store, report: RunReport, week: str, job: Mapping[str, Any],
            gone: str) -> None:
    """A job the server no longer knows (or whose files it no longer has) made nothing this
    run could use: it is forgotten and the week's calls are planned again (a new job with the
    Batch API on, else asked directly); nothing is paid twice, as nothing of it was cached or
    entered in the ledger."""
    note = f"Batch API job {job['id']} of {week}{gone}; forgotten, the week's calls are asked again"
    store.finish_batch_job(job["id"], "failed", gone.lstrip(" :"))
    logger.warning("%s", note)
    report.errors.append(note)


def _report_reading(report: RunReport, planning: RunReport) -> None:
    """What the plan read goes in the report of a run that stops after it (submit): the
    counts, the records of other weeks, the profile's choice, the sources' errors."""
    report.counts, report.records_other_weeks = planning.counts, planning.records_other_weeks
    report.relevance = planning.relevance
    report.errors += planning.errors


def _submit(digest: Digest, store: Store, week: str, planned: list[PlannedCall],
            report: RunReport) -> str:
    signed = {"digest_week": week, "digest_plan": plan_hash(planned)}
    known = {job["id"] for job in store.batch_jobs(week)}  # collected, or forgotten: not again
    with batch_client(digest) as client:
        adopted = client.find(signed, known)  # a run killed before it recorded its job
        job_id, input_file = adopted or client.submit(requests_jsonl(planned), signed)
    pause_at("batch-submitted")
    store.add_batch_job(job_id, week, input_file, len(planned), signed["digest_plan"])
    report.batch = {"job": job_id, "status": "submitted", "requests": len(planned)}
    done = "found unrecorded, now recorded" if adopted else "submitted"
    return (f"{week}: {done}, {len(planned)} requests, job {job_id} (the next run of {week} "
            "collects it)")


def _collect(digest: Digest, sources: Sequence[str], options: Options, store: Store,
             report: RunReport, out: Path, job: Mapping[str, Any], client: BatchClient
             ) -> str | None:
    status = client.status(job["id"])
    if status.status == GONE:
        raise JobGone(" is gone from the server (HTTP 404: it expired there, or the server was "
                      "reset)")
    if status.status not in FINISHED:  # a poll: it reads no listing, the job is what it has
        report.batch = {"job": job["id"], "status": status.status, "requests": job["requests"],
                        "completed": status.completed}
        return (f"{options.week}: Batch API job {job['id']} still running ({status.status}), "
                f"{status.completed} of {status.total or job['requests']} done; nothing published")
    lines = client.lines(status.output_file) + client.lines(status.error_file, "error")
    planned = plan_calls(digest, sources, options, store, out)
    if plan_hash(planned) != job["plan_hash"]:
        logger.warning("the week changed since job %s was submitted: answers that still match "
                       "a call are used, the rest is asked directly", job["id"])
    kept = _fill_cache(store, planned, lines, report, digest)
    pause_at("batch-collected")
    state = "failed" if status.status in FAILED else "collected"
    outcome = f"{status.status}: {kept} of {job['requests']} answers kept"
    store.finish_batch_job(job["id"], state, outcome)
    if state == "failed":
        note = (f"Batch API job {job['id']} {status.status}: {kept} of {job['requests']} answers "
                "kept; the rest is asked directly (or summarised offline, per settings)")
        logger.warning("%s", note)
        report.errors.append(note)
    return None


def _fill_cache(store: Store, planned: list[PlannedCall], lines: Sequence[bytes | str],
                report: RunReport, digest: Digest) -> int:
    """Put every usable answer in the cache (unchecked: the run checks each hit); its tokens go
    to the ledger at the batch rate. Returns how many answers were kept.

    One answer a request: the first line of a custom_id counts, a repeat of it is neither
    counted nor charged (one warning says how many), and one of no planned call is ignored."""
    by_key = {call.key: call for call in planned}
    factor = batch_price_factor(digest.settings.file)
    kept, cost, tokens, problems, repeats = 0, 0.0, 0, [], 0
    answered: set[str] = set()
    for item in read_output(lines):
        if isinstance(item, str):
            problems.append(item)
        elif item.key in answered:
            repeats += 1
        elif item.key in by_key:
            answered.add(item.key)
            kept += 1
            cost += _remember(store, by_key[item.key], item, digest.settings.file, factor)
            tokens += item.completion.prompt_tokens + item.completion.completion_tokens
    if repeats:
        logger.warning("the Batch API output answers some requests more than once: %d "
                       "repeated lines ignored (the first answer of each request is kept and "
                       "paid for)", repeats)
    report.batch = {"requests": len(planned), "answers": kept, "unusable": len(problems),
                    "tokens": tokens, "cost_usd": round(cost, 6), "price_factor": factor,
                    "problems": problems[:10]}
    return kept


def _remember(store: Store, call: PlannedCall, answer: Answer, config: Mapping[str, Any],
              factor: float) -> float:
    """Cache one answer and enter it in the ledger at the batch rate; returns its cost."""
    done, digest_of = answer.completion, prompt_hash(call.request)
    price = model_card(call.model, config).price
    cost = factor * price.cost(done.prompt_tokens, done.cached_tokens,
                               done.completion_tokens) if price else 0.0
    params = {"max_tokens": call.request.max_tokens, "task": call.task,
              "temperature": call.temperature}
    store.cache_response(call.key, call.model, answer.data, prompt_hash=digest_of, params=params)
    store.record_call(CallRecord(call.model, call.task, digest_of, call.key, done.prompt_tokens,
                                 done.completion_tokens, done.cached_tokens, 0, 0, "ok (batch)",
                                 cost))
    return cost


# Planning ------------------------------------------------------------------------------


def plan_calls(digest: Digest, sources: Sequence[str], options: Options, store: Store,
               out: Path, report: RunReport | None = None) -> list[PlannedCall]:
    """The first-wave calls a run of this week would make now (cache hits left out): the
    pipeline in the runner's planning mode, which asks nothing and makes no offline answers.
    ``report``: where the plan's run report goes (what it read)."""
    planner = Planner()
    digest.build(sources, options, store, report or RunReport(), out=out, planner=planner)
    return sorted(planner.calls, key=lambda call: call.key)


def plan_hash(planned: Sequence[PlannedCall]) -> str:
    return hashlib.sha256("\n".join(call.key for call in planned).encode()).hexdigest()[:16]


# Settings -------------------------------------------------------------------------------


def batch_client(digest: Digest) -> BatchClient:
    from .llm.endpoint import make_client
    from .llm.wiring import backend_settings

    settings = backend_settings(digest.settings, timeout_s=FILES_TIMEOUT_S)
    return BatchClient(make_client(settings), settings.api_key)


def batch_price_factor(config: Mapping[str, Any]) -> float:
    factor = config.get("batch_price_factor", BATCH_PRICE_FACTOR)
    if not isinstance(factor, (int, float)) or not 0 <= factor <= 1:
        raise ConfigError("batch_price_factor must be a number from 0 to 1 (0.5: half price)",
                          setting="batch_price_factor")
    return float(factor)


def _file_lines(path: Path) -> list[bytes]:
    try:
        return path.read_bytes().splitlines()
    except OSError as error:
        raise ConfigError(f"{path}: cannot read the batch output file ({error.strerror}); give "
                          "the JSONL file vLLM's run_batch wrote", setting="batch_output"
                          ) from None


def plan_lines(llm: Mapping[str, Any], factor: float) -> str:
    """``--dry-run --batch-api``: the direct estimate beside the Batch API one."""
    plan = llm.get("plan") or []
    first = [row for row in plan if row["task"] != "merge"]
    direct = sum(row["cost_usd"] for row in plan)
    batch = sum(row["cost_usd"] for row in first) * factor + (direct - sum(
        row["cost_usd"] for row in first))
    return (f"{'path':<10} {'requests':>8} {'USD':>9}\n"
            f"{'direct':<10} {len(plan):>8} {direct:>9.4f}\n"
            f"{'batch API':<10} {len(first):>8} {batch:>9.4f}  (+{len(plan) - len(first)} "
            f"merge calls direct, at the list price)\n")


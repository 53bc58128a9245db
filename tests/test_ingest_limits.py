"""Bounded work: records per source and per run, bytes, a deadline per URL. Every cut counted."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from typer.testing import CliRunner

from digest.cli import app
from digest.errors import ConfigError, SourceError
from digest.ingest import IngestLimits, ingest_limits, load_sources
from digest.ingest.fetch import Fetcher
from digest.ingest.limits import CONFIG_LIMITS
from digest.settings import resolve_settings
from tests.conftest import EXAMPLES, served


def papers(count: int, start: int = 0) -> list[dict[str, str]]:
    return [{"title": f"Made-Up Paper Number {i}",
             "abstract": f"We study made-up problem number {i} and solve it in a made-up way."}
            for i in range(start, start + count)]


def write(path: Path, rows: list[dict[str, str]]) -> str:
    if path.suffix == ".json":
        path.write_text(json.dumps(rows), encoding="utf-8")
    elif path.suffix == ".jsonl":
        path.write_text("\n".join(json.dumps(row) for row in rows), encoding="utf-8")
    else:
        lines = ["title,abstract"] + [f'"{r["title"]}","{r["abstract"]}"' for r in rows]
        path.write_text("\n".join(lines), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("name", ["big.json", "big.jsonl", "big.csv"])
def test_a_source_past_its_cap_is_cut_and_the_cut_counted(tmp_path, name):
    path = write(tmp_path / name, papers(30))
    result = load_sources([path], limits=IngestLimits(max_records_per_source=10))
    assert [r.title for r in result.records] == [p["title"] for p in papers(10)]
    (error,) = result.errors
    assert error.source == path and "20 of its 30 records were left out" in error.problem
    assert "[limits] max_records_per_source" in error.fix


def test_the_run_cap_cuts_the_source_that_passes_it(tmp_path):
    first = write(tmp_path / "a.jsonl", papers(8))
    second = write(tmp_path / "b.jsonl", papers(8, start=8))
    third = write(tmp_path / "c.jsonl", papers(3, start=16))
    result = load_sources([first, second, third], limits=IngestLimits(max_records_per_run=12))
    assert len(result.records) == 12 and result.sources_read == 3
    assert [(e.source, e.problem.split(", so ")[1]) for e in result.errors] == [
        (second, "4 of its 8 records were left out (kept 4)"),
        (third, "3 of its 3 records were left out (kept 0)")]
    assert all("[limits] max_records_per_run" in e.fix for e in result.errors)


def test_strict_stops_at_a_cut(tmp_path):
    path = write(tmp_path / "big.jsonl", papers(5))
    with pytest.raises(SourceError, match="left out"):
        load_sources([path], strict=True, limits=IngestLimits(max_records_per_source=2))


def test_a_capped_file_of_junk_names_the_cap_and_the_setting(tmp_path):
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps([{"title": f"P{i}", "abstract": "a"} for i in range(5000)]))
    (error,) = load_sources([str(path)], limits=IngestLimits(max_records_per_source=100)).errors
    assert "no paper listing in this file" in error.problem
    assert "first 100 of its 5,000 records" in error.problem
    assert "[limits] max_records_per_source" in error.fix


def test_a_source_larger_than_its_byte_cap_is_refused(tmp_path):
    path = write(tmp_path / "big.jsonl", papers(100))
    result = load_sources([path, "-"], stdin=lambda: Path(path).read_bytes(),
                          limits=IngestLimits(max_source_bytes=2000))
    assert result.records == []
    assert [e.source for e in result.errors] == [path, "<stdin>"]
    assert all("2,000 bytes a listing may be" in e.problem and "[limits] max_source_mb" in e.fix
               for e in result.errors)


def test_the_run_stops_reading_past_its_input_bytes(tmp_path):
    names = [write(tmp_path / f"{i}.jsonl", papers(10, start=10 * i)) for i in range(3)]
    first, second, _ = (Path(name).stat().st_size for name in names)
    half = load_sources(names, limits=IngestLimits(max_input_bytes=first + second // 2))
    assert len(half.records) == 10 and [e.source for e in half.errors] == names[1:]
    assert f"more than the {second // 2:,} bytes a listing may be" in half.errors[0].problem
    full = load_sources(names, limits=IngestLimits(max_input_bytes=first + second))
    assert len(full.records) == 20 and [e.source for e in full.errors] == names[2:]
    assert "used up the run's" in full.errors[0].problem
    assert "[limits] max_input_mb" in full.errors[0].fix


class Trickle:
    """A server that sends its body one byte every 0.05 s (50 s for all of it); with
    ``headers`` set, first that many header lines, one every 0.05 s."""

    def __init__(self) -> None:
        self.sent = 0
        self.size = 1000
        self.headers = 0
        self.headers_sent = 0


@pytest.fixture
def trickle() -> Iterator[tuple[str, Trickle]]:
    state = Trickle()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            self.send_response(200)
            self.flush_headers()
            try:
                for _ in range(state.headers):
                    time.sleep(0.05)
                    self.wfile.write(b"X-A: b\r\n")
                    self.wfile.flush()
                    state.headers_sent += 1
            except (BrokenPipeError, ConnectionResetError):
                return
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(state.size))
            self.end_headers()
            try:
                for _ in range(state.size):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    state.sent += 1
                    time.sleep(0.05)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client cut it, as it should

        def log_message(self, *args: object) -> None:
            pass

    with served(Handler) as url:
        yield f"{url}/slow.json", state


def test_a_trickling_server_is_cut_at_the_fetch_deadline(trickle):
    url, server = trickle
    result = load_sources([url], limits=IngestLimits(fetch_deadline_s=0.5))
    (error,) = result.errors
    assert "1 s fetch deadline" not in error.problem and "0.5 s fetch deadline" in error.problem
    assert "[limits] fetch_deadline" in error.problem
    assert server.sent < server.size  # cut long before the 1,000 bytes the server would send


def test_a_given_fetcher_keeps_its_own_deadline(trickle, tmp_path):
    url, server = trickle
    with Fetcher(cache_dir=tmp_path, deadline_s=0.5, timeout=5) as fetcher:
        (error,) = load_sources([url], fetcher=fetcher).errors
    assert "fetch deadline" in error.problem and server.sent < server.size


@pytest.mark.parametrize("fetcher", ["made", "given", "proxy"])
def test_a_server_trickling_its_headers_is_cut_at_the_fetch_deadline(
        trickle, tmp_path, monkeypatch, fetcher):
    """A server writing a header line every 2 s ran until killed at 60 s with fetch_deadline
    = 5 (400 s without a config): the deadline was checked only while reading the body (a
    probe, this stop). Here 60 lines 0.05 s apart (3 s) against a 0.5 s deadline; "proxy":
    the trickling server is the proxy of HTTP_PROXY, in front of a port where none listens."""
    url, server = trickle
    server.headers, server.size = 60, 2
    if fetcher == "proxy":
        monkeypatch.setenv("HTTP_PROXY", url.rsplit("/", 1)[0])
        for name in ("NO_PROXY", "no_proxy", "http_proxy", "ALL_PROXY", "all_proxy"):
            monkeypatch.delenv(name, raising=False)
        url = "http://127.0.0.1:9/listing.json"  # the discard port: the proxy answers
    started = time.monotonic()
    if fetcher == "given":
        with Fetcher(cache_dir=tmp_path, deadline_s=0.5, timeout=5) as fetcher:
            (error,) = load_sources([url], fetcher=fetcher).errors
    else:
        (error,) = load_sources([url], limits=IngestLimits(fetch_deadline_s=0.5)).errors
    assert "0.5 s fetch deadline" in error.problem and "[limits] fetch_deadline" in error.problem
    assert time.monotonic() - started < 2.0 and server.headers_sent < server.headers


def test_limits_come_from_the_config_file(tmp_path):
    config = tmp_path / "digest.toml"
    config.write_text('[digest]\nmodel = "m"\n\n[limits]\nmax_records_per_source = 500\n'
                      "max_input_mb = 10\nfetch_deadline = 30\n", encoding="utf-8")
    limits = ingest_limits(resolve_settings(config_path=config).file)
    assert limits == IngestLimits(max_records_per_source=500, max_input_bytes=10 * 2**20,
                                  fetch_deadline_s=30)
    assert ingest_limits({}) == IngestLimits()


@pytest.mark.parametrize("table, problem", [
    ("max_records = 5", "[limits]: unknown keys max_records"),
    ("max_records_per_run = 0", "max_records_per_run = 0: must be at least 1"),
    ('max_source_mb = "big"', "max_source_mb must be an integer"),
    ("fetch_deadline = true", "fetch_deadline must be a number"),
])
def test_a_bad_limit_is_a_usage_error_naming_the_file(tmp_path, table, problem):
    config = tmp_path / "digest.toml"
    config.write_text(f"[limits]\n{table}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=problem.replace("[", r"\[").replace("]", r"\]")) as error:
        resolve_settings(config_path=config)
    assert str(config) in str(error.value)


OUT_OF_RANGE = [(key, value) for key in CONFIG_LIMITS
                for value in ("nan", "inf", "-inf", "0", "-1")]
OUT_OF_RANGE += [("max_source_mb", "9000000000000000"), ("max_input_mb", "9000000000000000"),
                 ("fetch_deadline", "86401"), ("fetch_deadline", "0.01")]


@pytest.mark.parametrize("key, value", OUT_OF_RANGE)
def test_every_limit_out_of_its_range_is_a_usage_error_of_one_line_naming_it(tmp_path, key,
                                                                               value):
    """`fetch_deadline = nan` (or inf) was taken, and a URL fetch then had no time limit: a
    server sending a byte a second hung the run until it was killed; `max_source_mb =
    9000000000000000` made reading stdin fail with an OverflowError (a probe, stop 29)."""
    config = tmp_path / "digest.toml"
    config.write_text(f"[limits]\n{key} = {value}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as error:
        resolve_settings(config_path=config)
    message = str(error.value)
    assert error.value.exit_code == 2 and "\n" not in message
    assert message.startswith(f"{config}: [limits] {key}"), message


def test_a_fetch_deadline_of_nan_stops_the_command_with_exit_2(tmp_path):
    """The same from the command line: exit 2 and one line, before any source is read."""
    config = tmp_path / "digest.toml"
    config.write_text("[limits]\nfetch_deadline = nan\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["summarize", str(EXAMPLES), "--week", "2026-W47",
                                      "--config", str(config)])
    assert result.exit_code == 2, result.output
    assert result.output.strip() == (f"Error: {config}: [limits] fetch_deadline = nan: must be a "
                                     "finite number from 0.1 to 86400"), result.output


def test_the_readme_documents_every_limit_with_its_default():
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `(\w+)` \| (\d+) \|", readme, re.MULTILINE))
    defaults = IngestLimits()
    for key, (field, unit, _) in CONFIG_LIMITS.items():
        assert int(rows[key]) * unit == getattr(defaults, field), key


@pytest.mark.parametrize("shape", ["[{}]", '{{"papers": [{}]}}', "[[{}]]"])
def test_json_of_countless_empty_objects_is_refused_before_it_is_built(tmp_path, shape):
    path = tmp_path / "empties.json"
    path.write_text(shape.format(",".join(["{}"] * 5000)), encoding="utf-8")
    (error,) = load_sources([str(path)], limits=IngestLimits(max_records_per_source=10)).errors
    assert "holds 5,00" in error.problem and "10 records" in error.problem
    assert "[limits] max_records_per_source" in error.fix


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_braces_inside_strings_are_not_counted_as_objects(tmp_path, suffix):
    """LaTeX in abstracts ("\\mathcal{O}(n^{2})") is braces inside strings: 8 records with 200
    each were refused as "about 1,600 JSON objects" against a cap of 10 records (stop 27)."""
    rows = [{"title": f"Made-Up Paper Number {i}",
             "abstract": "We bound the cost by $\\mathcal{O}(n^{2})$ [1]. " * 100}
            for i in range(8)]
    result = load_sources([write(tmp_path / f"latex{suffix}", rows)],
                          limits=IngestLimits(max_records_per_source=10))
    assert not result.errors and len(result.records) == 8


def test_a_flood_of_objects_hidden_after_strings_is_still_refused(tmp_path):
    path = tmp_path / "flood.json"
    path.write_text('["a \\" {", ' + ",".join(["{}"] * 5000) + ', "}"]', encoding="utf-8")
    (error,) = load_sources([str(path)], limits=IngestLimits(max_records_per_source=10)).errors
    assert "holds 5,001 JSON objects and lists" in error.problem  # and the list


def test_rows_without_titles_count_against_the_cap(tmp_path):
    rows = papers(2) + [{"x": "no title"}] * 2 + papers(26, start=2)
    path = write(tmp_path / "mixed.jsonl", rows)  # 30 rows; the first 10 give 8 records
    result = load_sources([path], limits=IngestLimits(max_records_per_source=10))
    assert len(result.records) == 8
    (error,) = result.errors
    assert "20 of its 28 records were left out (kept 8)" in error.problem


def test_a_run_whose_only_listing_server_is_too_slow_exits_75(trickle, tmp_path, monkeypatch):
    """A URL source that could not be fetched now (too slow, down, 5xx) and nothing else read
    made `digest summarize URL` exit 1, "nothing read", where a retry later can succeed: exit
    75, as for an unavailable LLM endpoint or SMTP server (left by a helper, this stop)."""
    from typer.testing import CliRunner

    from digest.cli import app

    url, server = trickle
    server.size = 400  # 20 s of body against a 1 s deadline
    (tmp_path / "digest.toml").write_text("[limits]\nfetch_deadline = 1\n")
    monkeypatch.setenv("DIGEST_HOME", str(tmp_path / "home"))
    result = CliRunner().invoke(app, ["summarize", url, "--backend", "offline", "--config",
                                      str(tmp_path / "digest.toml"), "--week", "2026-W47"])
    assert result.exit_code == 75, result.output
    assert "fetch deadline" in result.stderr and "nothing read" in result.stderr

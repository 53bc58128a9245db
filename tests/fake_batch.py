"""A fake OpenAI Files + Batches server on 127.0.0.1 (and chat completions, for the direct path).

``POST /v1/files`` (multipart upload), ``GET /v1/files``, ``GET /v1/files/{id}/content``,
``POST /v1/batches``, ``GET /v1/batches/{id}`` and ``GET /v1/batches``;
``POST /v1/chat/completions`` answers with ``fake_openai``'s smart answers, so the batch path
and the direct path get the same answers, and ``POST /v1/embeddings`` with its bag-of-words
vectors.

Each job walks ``statuses`` (default validating → in_progress → completed), one step per
retrieve. When it reaches ``completed`` (or ``expired`` / ``cancelled``: then only the first
``partial`` requests are done) the output and error files are written: ``fail`` names
custom-id indexes (in input order) that go to the error file, ``answers`` maps an index to
a content string sent instead of the smart answer. ``drop``: the first so many jobs are
forgotten as soon as ``create`` has answered (a job expired from the server, a server reset):
a retrieve of one is a 404, as from OpenAI, while the list and the other jobs still answer.
``lose``: the first so many jobs to finish lose their output and error files (as files expire
from OpenAI): their content is a 404 while ``GET /v1/files`` still answers. ``broken`` maps
``retrieve``, ``list``, ``files`` or ``content`` (the GET endpoints) to a status they answer
instead (503: the server is down; 404 on ``files`` and ``content``: it has no Files endpoint).
``fail_message``: the failed lines are error-file lines saying this (``"response": null``, as
OpenAI writes a request it could not run) instead of an HTTP 500 response.
``respond``: a function giving each line's ``Reply`` from its body (``fake_openai.echoing``)
instead of the smart answer.
``repeat``: the first so many lines of the output file are written twice; ``stray``: the output
file ends with an answer for a custom_id no request had.
"""

from __future__ import annotations

import email.parser
import email.policy
import itertools
import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .fake_openai import Reply, _completion, _embeddings

TERMINAL = ("completed", "failed", "expired", "cancelled")


@dataclass
class Job:
    id: str
    input_file_id: str
    metadata: dict[str, str]
    lines: list[dict[str, Any]]
    statuses: list[str]
    step: int = 0
    output_file_id: str | None = None
    error_file_id: str | None = None

    @property
    def status(self) -> str:
        return self.statuses[min(self.step, len(self.statuses) - 1)]


@dataclass
class FakeBatch:
    """``with FakeBatch() as server: ... base_url=server.url``."""

    statuses: Sequence[str] = ("validating", "in_progress", "completed")
    fail: set[int] = field(default_factory=set)
    answers: dict[int, str] = field(default_factory=dict)
    partial: int = 0
    fail_message: str | None = None
    respond: Callable[[dict[str, Any]], Reply] | None = None
    drop: int = 0
    lose: int = 0
    broken: dict[str, int] = field(default_factory=dict)
    repeat: int = 0
    stray: bool = False
    files: dict[str, bytes] = field(default_factory=dict)
    jobs: dict[str, Job] = field(default_factory=dict)
    chat_requests: list[dict[str, Any]] = field(default_factory=list)
    embedding_requests: list[dict[str, Any]] = field(default_factory=list)
    uploads: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,),
                                        daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeBatch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # The endpoints --------------------------------------------------------------------

    def upload(self, filename: str, data: bytes) -> dict[str, Any]:
        with self._lock:
            file_id = f"file-{next(self._ids)}"
            self.files[file_id] = data
            self.uploads.append(file_id)
        return _file_object(file_id, filename, len(data))

    def create(self, body: dict[str, Any]) -> dict[str, Any]:
        data = self.files[body["input_file_id"]]
        lines = [json.loads(line) for line in data.splitlines() if line.strip()]
        with self._lock:
            job = Job(f"batch_{next(self._ids)}", body["input_file_id"],
                      dict(body.get("metadata") or {}), lines, list(self.statuses))
            if self.drop > 0:
                self.drop -= 1
            else:
                self.jobs[job.id] = job
        return _batch_object(job)

    def retrieve(self, job_id: str) -> dict[str, Any]:
        job = self.jobs[job_id]
        with self._lock:
            job.step += 1
            if job.status in TERMINAL and job.output_file_id is None:
                self._finish(job)
        return _batch_object(job)

    def _finish(self, job: Job) -> None:
        done = len(job.lines) if job.status == "completed" else self.partial
        if job.status == "failed":
            done = 0
        out, errors = [], []
        for index, line in enumerate(job.lines[:done]):
            (errors if index in self.fail else out).append(self._result(index, line))
        out += out[:self.repeat]
        if self.stray and out:
            out.append({**out[0], "custom_id": "no-such-request"})
        job.output_file_id = self._store_lines(out)
        job.error_file_id = self._store_lines(errors)
        if self.lose > 0:
            self.lose -= 1
            for file_id in (job.output_file_id, job.error_file_id):
                self.files.pop(file_id or "", None)

    def _result(self, index: int, line: dict[str, Any]) -> dict[str, Any]:
        if index in self.fail and self.fail_message is not None:
            return {"id": f"req-{index}", "custom_id": line["custom_id"], "response": None,
                    "error": {"code": "batch_failed", "message": self.fail_message}}
        if index in self.fail:
            return {"id": f"req-{index}", "custom_id": line["custom_id"],
                    "response": {"status_code": 500, "request_id": f"r{index}",
                                 "body": {"error": {"message": "server error"}}},
                    "error": None}
        reply = (self.respond(line["body"]) if self.respond is not None
                 else Reply(content=self.answers.get(index)))
        return {"id": f"req-{index}", "custom_id": line["custom_id"], "error": None,
                "response": {"status_code": 200, "request_id": f"r{index}",
                             "body": _completion(line["body"], reply)}}

    def _store_lines(self, rows: list[dict[str, Any]]) -> str | None:
        if not rows:
            return None
        file_id = f"file-{next(self._ids)}"
        self.files[file_id] = "".join(json.dumps(row) + "\n" for row in rows).encode()
        return file_id


def _file_object(file_id: str, filename: str, size: int) -> dict[str, Any]:
    return {"id": file_id, "object": "file", "bytes": size, "created_at": int(time.time()),
            "filename": filename, "purpose": "batch", "status": "processed"}


def _batch_object(job: Job) -> dict[str, Any]:
    total = len(job.lines)
    finished = job.status in TERMINAL
    completed = min(total, job.step * total // 4) if not finished else (
        total if job.status == "completed" else 0)
    return {"id": job.id, "object": "batch", "endpoint": "/v1/chat/completions",
            "input_file_id": job.input_file_id, "completion_window": "24h",
            "status": job.status, "created_at": int(time.time()), "metadata": job.metadata,
            "output_file_id": job.output_file_id, "error_file_id": job.error_file_id,
            "request_counts": {"total": total, "completed": completed, "failed": 0}}


def _handler_for(server: FakeBatch) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

        def do_GET(self) -> None:  # noqa: N802
            path = self.path.split("?", 1)[0].rstrip("/")
            parts = path.split("/")
            endpoint = ("list" if path == "/v1/batches" else "files" if path == "/v1/files"
                        else "content" if path.endswith("/content") else "retrieve")
            if endpoint in server.broken:
                self._json({"error": {"message": "unavailable"}}, server.broken[endpoint])
            elif path == "/v1/files":
                self._json({"object": "list", "has_more": False, "data": [
                    _file_object(file_id, "f.jsonl", len(data))
                    for file_id, data in server.files.items()]})
            elif path == "/v1/batches":
                self._json({"object": "list", "has_more": False,
                            "data": [_batch_object(job) for job in server.jobs.values()]})
            elif path.startswith("/v1/batches/") and parts[3] in server.jobs:
                self._json(server.retrieve(parts[3]))
            elif path.endswith("/content") and parts[3] in server.files:
                self._send(200, server.files[parts[3]], "application/octet-stream")
            else:
                self._json({"error": {"message": "not found"}}, 404)

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            path = self.path.split("?", 1)[0]
            if path == "/v1/files":
                filename, data = _multipart_file(self.headers["Content-Type"], raw)
                self._json(server.upload(filename, data))
            elif path == "/v1/batches":
                self._json(server.create(json.loads(raw)))
            elif path == "/v1/embeddings":
                body = json.loads(raw)
                server.embedding_requests.append(body)
                self._json(_embeddings(body))
            elif path == "/v1/chat/completions":
                body = json.loads(raw)
                server.chat_requests.append(body)
                self._json(_completion(body, Reply()))
            else:
                self._json({"error": {"message": "not found"}}, 404)

        def _json(self, payload: dict[str, Any], status: int = 200) -> None:
            self._send(status, json.dumps(payload).encode(), "application/json")

        def _send(self, status: int, data: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


def _multipart_file(content_type: str, raw: bytes) -> tuple[str, bytes]:
    """The uploaded file of a multipart/form-data body: (filename, bytes)."""
    message = email.parser.BytesParser(policy=email.policy.default).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + raw)
    for part in message.iter_parts():  # type: ignore[attr-defined]
        if part.get_param("name", header="content-disposition") == "file":
            payload = part.get_payload(decode=True)
            return part.get_filename() or "upload", payload if isinstance(payload, bytes) else b""
    raise ValueError("no file in the upload")

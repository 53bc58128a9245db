"""A real OpenAI-compatible HTTP server on 127.0.0.1, for tests and benchmarks.

It answers ``POST /v1/chat/completions`` over real sockets, whatever transport
the client uses, and records every request (path, headers, parsed body) so
tests can assert what was sent. Replies come from, in order of precedence:

1. ``responder(body)``, a function that may return a ``Reply`` for a request;
2. the script: ``script(*replies)`` queues replies, one per request, in arrival order;
3. ``default``: a ``Reply`` for every request (e.g. a full outage), or else
4. the smart mode: valid JSON for the digest prompts, a gist for exactly the
   ``[Pn]`` ids in the prompt, a merged summary for ``[Sn]``, an intro for ``[Tn]``.

Faults: any status with any headers (429 + Retry-After, 500, 401...), a hang
(the handler waits until the server closes), output cut with
``finish_reason="length"``, raw text instead of JSON, a raw HTTP body (``Reply.raw``: invalid
UTF-8, HTML, nesting deep enough to break a parser); ``BROKEN_ANSWERS`` names one such hostile
answer per mode, for the hostile-model tests. ``latency`` adds a fixed
delay to every answer; ``reject_formats`` makes the server answer a given
``response_format`` type with an error status, as some servers do.
``POST /v1/embeddings`` answers bag-of-words vectors; ``script_embeddings(*replies)`` queues
faults for it (a status with headers, a hang, or a raw body), one per embeddings request.
"""

from __future__ import annotations

import json
import re
import threading
import time
import zlib
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from digest.tokens import TokenCounter

_COUNTER = TokenCounter("gpt-4o-mini")
_DATA = re.compile(r"<<DATA (\w+)>>\n(.*?)<<END \1>>", re.DOTALL)
_ITEM = re.compile(r"^\[([PST])(\d+)\] (.*)$", re.MULTILINE)
_STOP = {"a", "an", "and", "for", "from", "in", "of", "on", "the", "to", "via", "with", "by",
         "is", "are", "towards", "toward", "using", "into", "at", "as", "its", "their", "your",
         "how", "what", "when", "do", "does", "can", "we", "you", "all", "not", "more", "than"}


@dataclass
class Reply:
    """One scripted answer. ``content`` None means: the smart answer for this request."""

    status: int = 200
    content: str | None = None
    finish_reason: str = "stop"
    headers: dict[str, str] = field(default_factory=dict)
    error: dict[str, Any] | None = None
    hang: bool = False
    cached_tokens: int = 0
    usage: bool = True
    body: bytes | None = None  # sent as the HTTP body as is, instead of a completion
    content_type: str = "application/json"
    trickle_s: float = 0.0  # send the body one byte at a time, this many seconds apart
    cut_after: int | None = None  # send this many bytes of the body, then close (or stall)
    stall: bool = False  # with cut_after: keep the connection open instead of closing it
    delay_s: float = 0.0  # wait this long before answering (on top of the server's latency)

    @classmethod
    def fail(cls, status: int, message: str = "fault", *, code: str | None = None,
             retry_after: str | None = None) -> Reply:
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        return cls(status=status, headers=headers,
                   error={"message": message, "type": code or "server_error", "code": code})

    @classmethod
    def text(cls, content: str, **kwargs: Any) -> Reply:
        return cls(content=content, **kwargs)

    @classmethod
    def json(cls, data: Any, **kwargs: Any) -> Reply:
        return cls(content=json.dumps(data), **kwargs)

    @classmethod
    def raw(cls, body: bytes, content_type: str = "application/json") -> Reply:
        return cls(body=body, content_type=content_type)


@dataclass(frozen=True)
class Recorded:
    path: str
    headers: dict[str, str]  # names in lower case
    body: dict[str, Any]
    raw: bytes

    @property
    def user_text(self) -> str:
        return "\n".join(m["content"] for m in self.body.get("messages", [])
                         if m.get("role") == "user")


class FakeOpenAI:
    """``with FakeOpenAI() as server: ... OpenAI(base_url=server.url)``."""

    def __init__(self, *, latency: float = 0.0, default: Reply | None = None,
                 responder: Callable[[dict[str, Any]], Reply | None] | None = None,
                 reject_formats: dict[str, int] | None = None):
        self.latency = latency
        self.default = default
        self.responder = responder
        self.reject_formats = dict(reject_formats or {})
        self.requests: list[Recorded] = []
        self.in_flight = 0
        self.max_in_flight = 0  # the most chat requests the server was answering at once
        self._script: list[Reply] = []
        self._embedding_script: list[Reply] = []
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,),
                                        daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._script.extend(replies)

    def script_embeddings(self, *replies: Reply) -> None:
        with self._lock:
            self._embedding_script.extend(replies)

    def _embedding_reply(self) -> Reply | None:
        with self._lock:
            return self._embedding_script.pop(0) if self._embedding_script else None

    def sent_formats(self) -> list[str | None]:
        """Each chat request's response_format type ("json_object+schema" when a json_object
        carried the schema; None: no response_format), in arrival order."""
        sent = []
        for request in self.chat_requests:
            response_format = request.body.get("response_format") or {}
            kind = response_format.get("type")
            with_schema = kind == "json_object" and "schema" in response_format
            sent.append(f"{kind}+schema" if with_schema else kind)
        return sent

    @property
    def embedding_requests(self) -> list[Recorded]:
        return [r for r in self.requests if _route(r.path).endswith("/embeddings")]

    @property
    def chat_requests(self) -> list[Recorded]:
        return [r for r in self.requests if _route(r.path).endswith("/chat/completions")]

    def close(self) -> None:
        self._closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAI:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # Called from handler threads ---------------------------------------------------------

    def _reply_for(self, body: dict[str, Any]) -> Reply:
        rejected = self.reject_formats.get((body.get("response_format") or {}).get("type", ""))
        if rejected:
            return Reply.fail(rejected, "response_format is not supported")
        if self.responder is not None:
            reply = self.responder(body)
            if reply is not None:
                return reply
        with self._lock:
            if self._script:
                return self._script.pop(0)
        return self.default or Reply()

    def _enter(self) -> None:
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _record(self, recorded: Recorded) -> None:
        with self._lock:
            self.requests.append(recorded)


def _handler_for(server: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet tests
            pass

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                body = {}
            headers = {name.lower(): value for name, value in self.headers.items()}
            server._record(Recorded(self.path, headers, body, raw))
            if _route(self.path).endswith("/embeddings"):
                self._embed(body)
                return
            if not _route(self.path).endswith("/chat/completions"):
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            server._enter()
            try:
                self._answer(body)
            finally:
                server._leave()

        def _embed(self, body: dict[str, Any]) -> None:
            reply = server._embedding_reply()
            if reply is not None and reply.hang:
                server._closing.wait(30)
                self.close_connection = True
            elif reply is not None and reply.body is not None:  # a lying answer, as given
                self._send(reply.status, reply.body, reply.headers, reply.content_type)
            elif reply is not None and reply.status != 200:
                self._send(reply.status, {"error": reply.error or {"message": "fault"}},
                           reply.headers)
            else:
                self._send(200, _embeddings(body))

        def _answer(self, body: dict[str, Any]) -> None:
            started = time.monotonic()
            reply = server._reply_for(body)
            if reply.delay_s and server._closing.wait(reply.delay_s):
                return
            if reply.hang:
                server._closing.wait(30)
                self.close_connection = True
                return
            if reply.body is not None:
                status, payload = reply.status, reply.body
            elif reply.status != 200:
                status, payload = reply.status, {"error": reply.error or {"message": "fault"}}
            else:
                status, payload = 200, _completion(body, reply)
            # A fixed latency: the time from request to answer, however long counting took.
            time.sleep(max(0.0, server.latency - (time.monotonic() - started)))
            self._send(status, payload, reply.headers, reply.content_type, reply.trickle_s,
                       reply.cut_after, reply.stall)

        def _send(self, status: int, payload: dict[str, Any] | bytes,
                  headers: dict[str, str] | None = None,
                  content_type: str = "application/json", trickle_s: float = 0.0,
                  cut_after: int | None = None, stall: bool = False) -> None:
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                if trickle_s:
                    self._trickle(data, trickle_s)
                elif cut_after is not None:
                    self.wfile.write(data[:cut_after])
                    self.wfile.flush()
                    if stall:
                        server._closing.wait(30)
                    self.close_connection = True
                else:
                    self.wfile.write(data)
            except OSError:  # the client gave up (a timeout test): nothing to answer
                pass

        def _trickle(self, data: bytes, pause_s: float) -> None:
            for index in range(len(data)):  # bounded by the body, and by the server closing
                if server._closing.wait(pause_s):
                    return
                self.wfile.write(data[index:index + 1])
                self.wfile.flush()

    return Handler


def _route(path: str) -> str:
    """The path without its query (Azure's dated API adds ?api-version=...)."""
    return path.split("?", 1)[0]


def _completion(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    content = reply.content if reply.content is not None else smart_answer(body)
    prompt_tokens = sum(_COUNTER.count(m.get("content") or "") + 3
                        for m in body.get("messages", [])) + 3
    schema = (body.get("response_format") or {}).get("json_schema")
    if schema:  # OpenAI bills a structured-output schema as prompt tokens
        prompt_tokens += _COUNTER.count(json.dumps(schema))
    usage = {"prompt_tokens": prompt_tokens, "completion_tokens": _COUNTER.count(content),
             "total_tokens": prompt_tokens + _COUNTER.count(content),
             "prompt_tokens_details": {"cached_tokens": reply.cached_tokens}}
    return {"id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "fake"),
            "choices": [{"index": 0, "finish_reason": reply.finish_reason,
                         "message": {"role": "assistant", "content": content}}],
            **({"usage": usage} if reply.usage else {})}


def _embeddings(body: dict[str, Any]) -> dict[str, Any]:
    """Bag-of-words vectors hashed into 64 dimensions: texts that share words point alike."""
    texts = body.get("input") or []
    texts = [texts] if isinstance(texts, str) else texts
    data = []
    for index, text in enumerate(texts):
        vector = [0.0] * 64
        for word in re.findall(r"[a-z]{4,}", text.lower()):
            vector[zlib.crc32(word.encode()) % 64] += 1.0
        data.append({"object": "embedding", "index": index, "embedding": vector})
    tokens = sum(_COUNTER.count(text) for text in texts)
    return {"object": "list", "data": data, "model": body.get("model", "fake"),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}


def smart_answer(body: dict[str, Any]) -> str:
    """A valid answer to a digest prompt: the first user message is the question."""
    question = next((m["content"] for m in body.get("messages", []) if m.get("role") == "user"),
                    "")
    match = _DATA.search(question)
    items = _ITEM.findall(match[2]) if match else []
    kinds = {kind for kind, _, _ in items}
    if "P" in kinds:
        return json.dumps(_summary_answer(items))
    if "S" in kinds:
        return json.dumps({"title": _title([text.split(":")[0] for _, _, text in items]),
                           "summary": f"Across {len(items)} groups of papers, the theme moves "
                                      "from new methods to careful evaluation."})
    if "T" in kinds:
        return json.dumps({"intro": f"This week brings {len(items)} themes. They range from "
                                    "new methods to careful evaluations."})
    return json.dumps({"answer": "nothing to do"})


def _summary_answer(items: list[tuple[str, str, str]]) -> dict[str, Any]:
    titles = [text for _, _, text in items]
    gists = [{"id": f"P{number}", "gist": f"Contributes {_plain(text)[:200]}."}
             for _, number, text in items]
    first, rest = f"P{items[0][1]}", ", ".join(f"P{number}" for _, number, _ in items[1:])
    summary = (f"These {len(items)} papers share one question and differ in method; "
               f"together they show where the field is heading [{first}].")
    if rest:
        summary += f" The others compare approaches [{rest}]."
    return {"title": _title(titles), "gists": gists, "summary": summary,
            "tldr": f"{_title(titles)}: {len(items)} papers, one question."}


def _title(titles: list[str]) -> str:
    words = Counter(w for title in titles for w in set(_plain(title).lower().split())
                    if w not in _STOP and len(w) > 2 and not w.isdigit())
    top = [w.capitalize() for w, _ in sorted(words.items(), key=lambda kv: (-kv[1], kv[0]))[:2]]
    return " and ".join(top) or "Assorted papers"


def _plain(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s-]", " ", text).split())


# Hostile answers, one per mode -----------------------------------------------------------

PRIZE = "claim your prize at evil-prize.xyz/win"
INSTRUCTION_ECHO = "Answer with one JSON object and nothing else."


def _completion_bytes(content: bytes) -> bytes:
    """A completion body whose content is ``content`` (JSON-encoded bytes, maybe broken)."""
    return (b'{"id": "x", "object": "chat.completion", "created": 0, "model": "m", '
            b'"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": '
            b'"assistant", "content": ' + content + b'}}]}')


def _with(body: dict[str, Any], **changes: Any) -> Reply:
    """The smart answer with some fields replaced (gist: one value for every paper)."""
    data = json.loads(smart_answer(body))
    gist = changes.pop("gist", None)
    if gist is not None and "gists" in data:
        data["gists"] = [{"id": item["id"], "gist": gist} for item in data["gists"]]
    data.update({key: value for key, value in changes.items() if key in data})
    return Reply.json(data)  # json.dumps writes a lone surrogate as a "\ud800" escape


ESCAPED = "\\u0073"  # "s" as a JSON escape


def echoing(secret: str, plain: Sequence[str] = ("summary", "tldr", "intro"),
            escaped: Sequence[str] = ("gist",)) -> Callable[[dict[str, Any]], Reply]:
    """A responder whose smart answers quote ``secret`` (a lying server echoing the API key):
    plain in the ``plain`` fields, JSON-escaped ("\\u0073k-...") in the ``escaped`` ones
    ("gist": every gist)."""
    def quoted(data: dict[str, Any], fields: Sequence[str], key: str) -> None:
        for name in fields:
            if name in data:
                data[name] = f"{data[name]} The key is {key} here."
        if "gist" in fields:
            for item in data.get("gists", []):
                item["gist"] += f" Key {key} too."

    def respond(body: dict[str, Any]) -> Reply:
        data = json.loads(smart_answer(body))
        quoted(data, plain, secret)
        quoted(data, escaped, ESCAPED + secret[1:])
        return Reply.text(json.dumps(data).replace("\\" + ESCAPED, ESCAPED))

    assert secret.startswith("s")
    return respond


BROKEN_ANSWERS: dict[str, Callable[[dict[str, Any]], Reply]] = {
    # The HTTP body itself is broken.
    "invalid-utf8": lambda body: Reply.raw(
        _completion_bytes(b'"{\\"title\\": \\"caf\xff\xfe\xc3(\\"}"')),
    "html-body": lambda body: Reply.raw(b"<html><body>Please log in</body></html>",
                                        "text/html"),
    "empty-body": lambda body: Reply.raw(b""),
    "deep-body": lambda body: Reply.raw(_completion_bytes(b"[" * 100_000 + b"]" * 100_000)),
    "wrong-shape": lambda body: Reply.raw(b'{"choices": [], "usage": {"prompt_tokens": "x"}}'),
    "content-not-text": lambda body: Reply.raw(_completion_bytes(b'{"title": 5}')),
    # The body is fine; what the model wrote is not.
    "not-json": lambda body: Reply.text("I am sorry, I cannot help with that."),
    "deep-content": lambda body: Reply.text('{"title": ' + "[" * 1000 + "]" * 1000 + "}"),
    "oversized": lambda body: Reply.json({"title": "Big", "summary": "word " * 400_000,
                                          "gists": []}),
    "lone-surrogate": lambda body: _with(
        body, title="Lone \ud800 surrogate", summary="Broken \udfff text. It is here.",
        intro="An intro \ud800 with a lone half. It stays readable."),
    "controls-bidi": lambda body: _with(
        body, title="Evil \u202egnp.exe\u202c title", summary="Red \x1b[31m alert \x00 here.",
        intro="Hidden \u2066text\u2069 here. And more."),
    "address": lambda body: _with(body, summary=f"Great work; {PRIZE} today.", gist="See bit.ly/x",
                                  intro=f"This week: {PRIZE}. Really."),
    "defanged": lambda body: _with(body, summary="Read more at example[.]com right now.",
                                   gist="Visit evilprize dot xyz for the code",
                                   intro="See example(dot)com. Then 10.0.0.1 too."),
    "ungrounded-title": lambda body: _with(body, title="Visit evilprize dot xyz"),
    "instruction-echo": lambda body: _with(body, title="Answer with one JSON object",
                                           gist=INSTRUCTION_ECHO, intro=INSTRUCTION_ECHO),
}


# Made-up papers for LLM tests (never real data) ------------------------------------------

_METHODS = ("Lattice", "Prism", "Harbor", "Quill", "Ember", "Atlas", "Beacon", "Cinder", "Delta",
            "Fable", "Grove", "Helix", "Iris", "Juniper", "Kestrel", "Lumen", "Mosaic", "Nimbus")
_TOPICS = ("sparse retrieval", "robot grasping", "protein folding", "code repair",
           "weather forecasting", "speech separation")


def made_up_papers(n: int, *, topic_index: int = 0, start: int = 0) -> list[Any]:
    """``n`` invented papers on one topic, each with a multi-sentence abstract."""
    from digest.models import Paper

    topic = _TOPICS[topic_index % len(_TOPICS)]
    papers = []
    for i in range(start, start + n):
        name = f"{_METHODS[i % len(_METHODS)]}{i}"
        abstract = (f"Work on {topic} has long struggled with noisy supervision and small data. "
                    f"We introduce {name}, which pairs a compact encoder with a learned "
                    f"verifier for {topic}. On {3 + i % 4} invented benchmarks {name} improves "
                    f"accuracy by {5 + i % 7} points over strong baselines. We also study "
                    f"when the verifier fails and release our evaluation suite.")
        papers.append(Paper(id=f"2601.{i:05d}", title=f"{name}: Verified Learning for {topic}",
                            abstract=abstract, url=f"https://arxiv.org/abs/2601.{i:05d}"))
    return papers


# Local servers as they behave (their documented quirks) ----------------------------------

# llama-cpp-python 0.3.x validates response_format with pydantic and answers an error with
# HTTP 500 (not 422), naming the field: seen against a real server (issue 18).
LLAMA_CPP_PYTHON_REFUSAL = ("[{'type': 'literal_error', 'loc': ('body', 'response_format', "
                            "'type'), 'msg': \"Input should be 'text' or 'json_object'\", "
                            "'input': 'json_schema'}]")
# LM Studio takes json_schema and text only; its error is a bare string (lmstudio-bug-tracker#189).
LM_STUDIO_REFUSAL = "'response_format.type' must be 'json_schema' or 'text'"
# llama-server builds before json_schema support (llama.cpp PR 9527), HTTP 500.
OLD_LLAMA_SERVER_REFUSAL = ('response_format type must be one of "text" or "json_object", but '
                            "got: json_schema")
# A server that validates json_object strictly (OpenAI-like): no extra keys.
STRICT_OBJECT_REFUSAL = ("Invalid parameter: 'response_format.schema' is not allowed when "
                         "type is 'json_object'")


def _format_of(body: dict[str, Any]) -> tuple[str, bool]:
    """(the response_format type or "", whether it carries a schema)."""
    response_format = body.get("response_format") or {}
    kind = str(response_format.get("type") or "")
    return kind, "schema" in response_format or "json_schema" in response_format


def server_like(kind: str, *, answer_delay_s: float = 0.0) -> Callable[[dict[str, Any]],
                                                                        Reply | None]:
    """A responder that refuses and answers as ``kind`` does; answers wait ``answer_delay_s``.

    ``llama-cpp-python``: json_schema → 500 naming ``response_format.type``; json_object with
    or without a schema is answered. ``llama-server``, ``ollama``, ``vllm``: every format is
    answered. ``lm-studio``: json_object → 400. ``old-llama-server``: json_schema → 500
    naming ``response_format``. ``strict-object``: json_object with a schema →
    400. ``opaque-500``: json_schema → a bare 500 that names nothing (a crash)."""
    def respond(body: dict[str, Any]) -> Reply | None:
        fmt, with_schema = _format_of(body)
        if kind == "llama-cpp-python" and fmt == "json_schema":
            return Reply.fail(500, LLAMA_CPP_PYTHON_REFUSAL)
        if kind == "lm-studio" and fmt == "json_object":
            return Reply(status=400, body=json.dumps({"error": LM_STUDIO_REFUSAL}).encode())
        if kind == "old-llama-server" and fmt == "json_schema":
            return Reply.fail(500, OLD_LLAMA_SERVER_REFUSAL)
        if kind == "strict-object" and fmt == "json_object" and with_schema:
            return Reply.fail(400, STRICT_OBJECT_REFUSAL)
        if kind == "opaque-500" and fmt == "json_schema":
            return Reply.fail(500, "Internal Server Error")
        return Reply(delay_s=answer_delay_s)

    return respond


def probe_hangs_once(answer_delay_s: float = 0.0) -> Callable[[dict[str, Any]], Reply | None]:
    """json_schema → a bare 500; the first json_object request hangs (the probe times out);
    later json_object requests are answered."""
    lock, hung = threading.Lock(), []

    def respond(body: dict[str, Any]) -> Reply | None:
        fmt, _ = _format_of(body)
        if fmt == "json_schema":
            return Reply.fail(500, "Internal Server Error")
        with lock:
            first = fmt == "json_object" and not hung
            hung.append(fmt)
        return Reply(hang=True) if first else Reply(delay_s=answer_delay_s)

    return respond

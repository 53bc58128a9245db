"""The Batch API, as files: requests out as JSONL, answers back from the output file.

A batch request is the body ``OpenAIChat`` would POST to ``/v1/chat/completions`` now
(``OpenAIChat.request_body``: the structured-output level and token parameter the server has
taught it), with ``custom_id`` set to the call's cache key, so that an answer coming back
hours later lands in the LLM cache exactly where the runner will look for it. Answers are
stored *unvalidated*: the runner checks every cache hit with the call's own check before
using it (``CallRunner._answer_from_cache``), so a batch answer passes exactly the
validation a fresh one does, and an invalid one gets the same repair.

``BatchClient`` drives any server implementing OpenAI's Files and Batches endpoints
(OpenAI, Azure OpenAI, a test fake); vLLM's ``run_batch`` writes the same output file.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, LLMError, LLMUnavailable
from ..redaction import api_key_from_environment, mask_secret
from ._ledger import prompt_hash as messages_hash
from ._ledger import question_key
from ._plan import PlannedCall
from .answers import parse_json_answer
from .base import AnswerUnreadable, ChatRequest, Completion
from .response import completion_from_body

if TYPE_CHECKING:
    import openai

ENDPOINT = "/v1/chat/completions"
BATCH_PRICE_FACTOR = 0.5  # OpenAI and Azure bill Batch API tokens at half the list price
FINISHED = ("completed", "failed", "expired", "cancelled")
FAILED = ("failed", "expired", "cancelled")
NO_SUCH_ENDPOINT = (404, 405, 501)  # what servers without a Batch API answer (vLLM serve: 404)
TRY_AGAIN = (408, 429)  # and 5xx but 501: the server is down, overloaded or rate-limiting
# No server status: the server has a Batches endpoint but no job of this id (a 404 on
# retrieve while the list answers): it expired from the server, or the server was reset.
GONE = "gone"


class JobGone(Exception):
    """What a job made is gone from the server (a 404 while the server's list answers): the
    job itself (``GONE``), or its output or error file (files expire there). The message says
    which, to follow "Batch API job <id> of <week>"."""


@dataclass(frozen=True)
class Answer:
    """One line of an output file: the cache key, the parsed JSON, and what it cost."""

    key: str
    data: Any
    completion: Completion


@dataclass(frozen=True)
class JobStatus:
    status: str
    total: int
    completed: int
    failed: int
    output_file: str | None
    error_file: str | None


def cache_key(model: str, request: ChatRequest, temperature: float | None) -> str:
    """The runner's cache key for ``request`` (the task is its ``schema_name``): a batch
    answer filed under it is a cache hit for the direct path."""
    params = {"max_tokens": request.max_tokens, "task": request.schema_name,
              "temperature": temperature}
    return question_key(model, request.messages, params)


def prompt_hash(request: ChatRequest) -> str:
    return messages_hash(request.messages)


def request_body(model: str, request: ChatRequest, temperature: float | None
                 ) -> dict[str, Any]:
    """The body for a backend that cannot say what it would send (``OpenAIChat`` can:
    ``request_body``): ``request`` at the strictest level (json_schema)."""
    body: dict[str, Any] = {"model": model, "messages": [dict(m) for m in request.messages],
                            "max_tokens": request.max_tokens}
    if temperature is not None:
        body["temperature"] = temperature
    if request.schema is not None:
        body["response_format"] = {"type": "json_schema", "json_schema": {
            "name": request.schema_name, "strict": True, "schema": dict(request.schema)}}
    elif request.json_output:
        body["response_format"] = {"type": "json_object"}
    return body


def requests_jsonl(calls: Iterable[PlannedCall]) -> bytes:
    """The batch input file: one ``/v1/chat/completions`` request a line."""
    lines = (json.dumps({"custom_id": call.key, "method": "POST", "url": ENDPOINT,
                         "body": dict(call.body)},
                        ensure_ascii=False, sort_keys=True) for call in calls)
    return "".join(line + "\n" for line in lines).encode()


def read_output(lines: Iterable[bytes | str], secret: str | None = None
                ) -> Iterator[Answer | str]:
    """Each line of an output (or error) file as an ``Answer``, or a one-line reason why
    that request has no usable answer (the direct path then asks it again).

    The API key (``secret``; by default the run's, from the environment) is masked in every
    text read, before it is cut: a server may quote it, and the reasons go to the report."""
    key = api_key_from_environment() if secret is None else secret
    for number, line in enumerate(lines, start=1):
        text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
        if text.strip():
            yield _answer_of(mask_secret(text, key), number, key)


def _answer_of(text: str, number: int, key: str | None) -> Answer | str:
    try:
        row = json.loads(text)
    except ValueError:
        return f"line {number}: not JSON"
    if not isinstance(row, dict) or not isinstance(row.get("custom_id"), str):
        return f"line {number}: no custom_id"
    response: dict[str, Any] = row["response"] if isinstance(row.get("response"), dict) else {}
    request = mask_secret(row["custom_id"], key)[:12]
    if row.get("error") or response.get("status_code") != 200:
        return f"{request}: {mask_secret(_error_text(row, response), key)[:120]}"
    try:
        completion = completion_from_body(json.dumps(response.get("body")).encode())
        if completion.finish_reason == "length":
            return f"{request}: cut off at the output limit"
        return Answer(row["custom_id"], parse_json_answer(completion.text, key), completion)
    except (AnswerUnreadable, ValueError) as error:
        return f"{request}: {mask_secret(str(error), key)[:120]}"


def _error_text(row: Mapping[str, Any], response: Mapping[str, Any]) -> str:
    error = row.get("error")
    if isinstance(error, dict):
        return str(error.get("message") or error.get("code") or "error")
    return f"HTTP {response.get('status_code')}"


class BatchClient:
    """Files and Batches through the official client (``digest.llm.endpoint.make_client``)."""

    def __init__(self, client: openai.OpenAI, secret: str | None = None) -> None:
        self._client = client
        self._secret = secret  # masked in every message that quotes the server

    def __enter__(self) -> BatchClient:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the client's connections (left to the garbage collector, each socket
        was a ResourceWarning)."""
        self._client.close()

    def submit(self, jsonl: bytes, metadata: Mapping[str, str]) -> tuple[str, str]:
        """Upload the requests and create the batch: (batch id, input file id)."""
        uploaded = self._call(lambda: self._client.files.create(
            file=("digest-batch.jsonl", jsonl, "application/jsonl"), purpose="batch"))
        batch = self._call(lambda: self._client.batches.create(
            input_file_id=uploaded.id, endpoint="/v1/chat/completions", completion_window="24h",
            metadata=dict(metadata)))
        return batch.id, uploaded.id

    def find(self, metadata: Mapping[str, str], known: Collection[str] = ()
             ) -> tuple[str, str] | None:
        """A job created earlier with this metadata, not failed and not one of ``known``
        (recorded already): (id, input file) or None.

        A run killed after the server created its job but before the store recorded it
        adopts that job instead of paying for a second one."""
        page = self._call(lambda: self._client.batches.list(limit=100))
        for batch in page.data:
            if (batch.status not in FAILED and batch.id not in known and batch.metadata
                    and all(batch.metadata.get(k) == v for k, v in metadata.items())):
                return batch.id, batch.input_file_id
        return None

    def status(self, job_id: str) -> JobStatus:
        """The job's status, ``GONE`` when the server no longer knows it."""
        batch = self._call(lambda: self._retrieve(job_id))
        if batch is None:
            return JobStatus(GONE, 0, 0, 0, None, None)
        counts = batch.request_counts
        return JobStatus(batch.status, counts.total if counts else 0,
                         counts.completed if counts else 0, counts.failed if counts else 0,
                         batch.output_file_id, batch.error_file_id)

    def _retrieve(self, job_id: str) -> Any:
        """The job, or None for a 404 from a server whose list of jobs answers: a server with
        no Batches endpoint at all 404s on the list too, and ``_call`` says so."""
        import openai

        try:
            return self._client.batches.retrieve(job_id)
        except openai.NotFoundError:
            self._client.batches.list(limit=1)
            return None

    def lines(self, file_id: str | None, kind: str = "output") -> list[bytes]:
        """The lines of the job's ``kind`` (output or error) file; ``JobGone`` when the server
        no longer has it."""
        if not file_id:
            return []
        content = self._call(lambda: self._content(file_id))
        if content is None:
            raise JobGone(f": its {kind} file {file_id} is gone from the server (HTTP 404: "
                          "files expire there)")
        return content.content.splitlines()

    def _content(self, file_id: str) -> Any:
        """The file, or None for a 404 from a server whose list of files answers: a server
        with no Files endpoint at all 404s on the list too, and ``_call`` says so."""
        import openai

        try:
            return self._client.files.content(file_id)
        except openai.NotFoundError:
            self._client.files.list(limit=1)
            return None

    def _call(self, action: Any) -> Any:
        import openai

        try:
            return action()
        except openai.APIStatusError as error:
            if error.status_code in NO_SUCH_ENDPOINT:
                raise ConfigError(
                    f"Batch API: the server has no Files/Batches endpoints (HTTP "
                    f"{error.status_code}); set batch_api to false, or run vLLM's run_batch on "
                    "the requests and give its output with batch_output",
                    setting="batch_api") from None
            message = mask_secret(str(error.message), self._secret)[:120]
            if error.status_code in TRY_AGAIN or error.status_code >= 500:
                raise LLMUnavailable(f"Batch API: HTTP {error.status_code} from the server "
                                     f"({message}); the next run tries again") from None
            raise LLMError(f"Batch API: HTTP {error.status_code} from the server ({message})"
                           ) from None
        except openai.APIError as error:
            raise LLMUnavailable(f"Batch API: the server did not answer ({type(error).__name__})"
                                 "; the next run tries again") from None

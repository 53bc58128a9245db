"""A chat completion's HTTP body, read by digest itself: bounded, and never trusted.

The official client would decode the body for us, and raise whatever its JSON
parser or our attribute access hit: ``UnicodeDecodeError`` on invalid UTF-8,
``RecursionError`` on nesting 100,000 deep, ``AttributeError`` on an HTML login
page sent with status 200. Here the body is read in chunks up to
``MAX_BODY_BYTES`` and within the request's timeout, and every way it can be
unusable becomes one ``AnswerUnreadable``, which the runner treats like an
invalid answer: one repair request, then the offline summarizer for that batch.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from typing import Any

from ..normalize import encodable
from ..textsafety import untrusted_preview
from .base import AnswerUnreadable, Completion

MAX_BODY_BYTES = 4_000_000  # an answer is a few kB; 16k output tokens are ~100 kB of JSON
MAX_CONTENT_CHARS = 200_000


class BodyTooSlow(Exception):
    """The body did not arrive within the request's timeout (a server trickling bytes)."""


def read_body(chunks: Iterable[bytes], *, deadline: float) -> bytes:
    """The whole body, refused past ``MAX_BODY_BYTES`` or once ``deadline`` (monotonic) passes."""
    parts, size = [], 0
    for chunk in chunks:
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise AnswerUnreadable(f"the server's answer is longer than {MAX_BODY_BYTES:,} bytes")
        if time.monotonic() > deadline:
            raise BodyTooSlow("the answer did not arrive within the timeout")
        parts.append(chunk)
    return b"".join(parts)


def completion_from_body(raw: bytes) -> Completion:
    """The completion in a chat-completions body, or ``AnswerUnreadable`` saying what is wrong."""
    message, choice, usage = _parts(_json_body(raw))
    content = message.get("content")
    if content is None:
        content = ""
    if not isinstance(content, str):
        raise AnswerUnreadable("the answer's content is not text")
    if len(content) > MAX_CONTENT_CHARS:
        raise AnswerUnreadable(f"the answer is {len(content):,} characters long; write the "
                               "short JSON object asked for")
    details = usage.get("prompt_tokens_details")
    finish = choice.get("finish_reason")
    return Completion(
        # JSON may escape half of a surrogate pair ("\ud800"): sent back in a repair
        # request, kept in the cache or written to the issue, it ended the run.
        text=encodable(content),
        prompt_tokens=_count(usage.get("prompt_tokens")),
        completion_tokens=_count(usage.get("completion_tokens")),
        cached_tokens=_count(details.get("cached_tokens") if isinstance(details, dict) else 0),
        finish_reason=finish if isinstance(finish, str) and finish else "stop")


def _json_body(raw: bytes) -> Any:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise AnswerUnreadable(f"the server's answer is not UTF-8 (byte {error.start})") from None
    try:
        return json.loads(text)
    except RecursionError:
        raise AnswerUnreadable("the server's answer is nested too deep to read") from None
    except ValueError:
        raise AnswerUnreadable(f"the server's answer is not JSON ({_preview(text)!r})") from None


def _parts(body: Any) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """(message, choice, usage) of a completion body, each a dict."""
    choices = body.get("choices") if isinstance(body, dict) else None
    choice = choices[0] if isinstance(choices, list) and choices else None
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(choice, dict) or not isinstance(message, dict):
        raise AnswerUnreadable("the server's answer holds no chat completion choice")
    usage = body.get("usage")
    return message, choice, usage if isinstance(usage, dict) else {}


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _preview(text: str, limit: int = 40) -> str:
    return untrusted_preview(text, limit)

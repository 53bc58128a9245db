"""One question on its way through the runner: the ``Call``, the reply a worker brings
back, and what is made of a model's words (an answer, or the problems that reject it)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ..errors import LLMError
from ..redaction import api_key_from_environment, mask_secret
from ..textsafety import untrusted_preview
from .answers import parse_json_answer
from .base import Completion, Message

logger = logging.getLogger("digest.llm")

Checker = Callable[[Any], tuple[Any, list[str]]]
CUT_OFF = "the answer was cut off at the output limit; write shorter sentences"
UNREADABLE = "unreadable"  # the finish reason we give an answer whose body could not be read
MAX_RESENT_CHARS = 20_000  # a longer rejected answer is not sent back with the repair request
LOGGED_ANSWER_CHARS = 300  # what -vv shows of a rejected answer


@dataclass(eq=False)
class Call:
    """One question and what to do with its answer (``None`` means: fall back offline).

    ``prompt`` renders the messages when they are first needed (an in-process backend
    never needs them); ``extractive`` is digest's own answer, made without a model."""

    task: str  # summary, merge, intro: the ledger's and the logs' name for it
    label: str  # what it is about, for logs and the dry-run plan (a theme title)
    prompt: Callable[[], tuple[Message, ...]]
    check: Checker
    on_done: Callable[[Any], None]
    max_tokens: int
    expected_output: int
    schema: Mapping[str, Any] | None = None
    priority: int = 0  # higher first: how many calls still wait behind this one
    question: Call | None = None  # set on a repair: the call it repairs
    extractive: Callable[[], Any] | None = None
    abstract_tokens: int = 0  # of the titles and abstracts it sends (the report's, when sent)

    @cached_property
    def messages(self) -> tuple[Message, ...]:
        return tuple(self.prompt())

    @property
    def original(self) -> Call:
        return self.question or self

    def repair(self, answer: Completion, problems: list[str], message: str) -> Call:
        """This question asked again, with the rejected answer (if worth it) and what is wrong."""
        messages = list(self.messages)
        if worth_resending(answer):
            messages.append({"role": "assistant", "content": answer.text})
        messages.append({"role": "user", "content": message})
        return Call(self.task, self.label, lambda: tuple(messages), self.check, self.on_done,
                    self.max_tokens, self.expected_output, self.schema, self.priority,
                    question=self, extractive=self.extractive)


@dataclass(frozen=True)
class Reply:
    """What a worker thread brings back for one call."""

    latency_s: float
    completion: Completion | None = None
    error: LLMError | None = None
    data: Any = None
    answer: Any = None
    problems: tuple[str, ...] = ()


def read_answer(completion: Completion, check: Checker) -> tuple[Any, Any, list[str]]:
    """(data, answer, problems): whatever the model wrote, an answer or what is wrong with it."""
    if completion.answer is not None:  # an in-process backend's: already digest's own terms
        return None, completion.answer, []
    if completion.finish_reason == "length":
        return None, None, [CUT_OFF]
    try:
        data = parse_json_answer(completion.text)
        answer, problems = check(data)
    except ValueError as error:
        return None, None, [str(error)]
    except Exception as error:  # noqa: BLE001 - a model's answer may cost its batch, no more
        logger.warning("an answer broke its check (%s); treated as invalid",
                       type(error).__name__)
        return None, None, ["the answer could not be read; answer with the JSON object asked for"]
    return data, answer, problems


def worth_resending(completion: Completion) -> bool:
    """A cut, unreadable or huge answer is not sent back with the repair request."""
    return (completion.finish_reason not in ("length", UNREADABLE)
            and len(completion.text) <= MAX_RESENT_CHARS)


def log_rejected(call: Call, completion: Completion | None, problems: tuple[str, ...]) -> None:
    """``-v``: that an answer was rejected and why; ``-vv``: also what the model said."""
    logger.info("%s %r: answer rejected (%s)", call.task, call.label, "; ".join(problems))
    if completion is not None and logger.isEnabledFor(logging.DEBUG):
        logger.debug("%s %r: the rejected answer (%d characters) began: %r", call.task,
                     call.label, len(completion.text), shown_answer(completion.text))


def shown_answer(text: str, limit: int = LOGGED_ANSWER_CHARS) -> str:
    """A model's answer as a log shows it: secrets masked, cleaned, cut to ``limit``."""
    return untrusted_preview(mask_secret(text[:limit * 4], api_key_from_environment()), limit)

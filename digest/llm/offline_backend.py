"""The ``offline`` backend: digest's own extractive summarizer, behind the chat interface.

Every question digest asks carries its own answer made without a model
(``ChatRequest.extractive``: the extractive summary of a batch, the gists of a batch
whose theme is summarised as a whole, no intro). The offline backend answers with
exactly that, as an answer already in digest's terms (``Completion.answer``), so
nothing is serialised to JSON and read back. It says ``in_process = True``: the runner
asks it in the calling thread, renders no prompt, and keeps no cache, ledger, budget,
plan or breaker for it. It costs nothing (``price``), so ``max_cost`` never stops it.
"""

from __future__ import annotations

from .base import BackendSettings, ChatRequest, Completion
from .catalog import Price

FREE = Price(0.0, 0.0, 0.0)


class OfflineBackend:
    """Answers every request with the extractive answer it carries (or none)."""

    name = "offline"
    model = ""  # no model: the footer says "backend offline" and the report's model is null
    price = FREE
    in_process = True

    def __init__(self, settings: BackendSettings | None = None) -> None:
        del settings  # nothing to configure: no server, no key, no model

    def complete(self, request: ChatRequest) -> Completion:
        answer = request.extractive() if request.extractive is not None else None
        return Completion("", 0, 0, answer=answer)

    def close(self) -> None:
        pass

"""What we know about a model: its context window, output limit and price.

Built-in entries cover common OpenAI models (list prices in USD per million
tokens, cached input at its discount). The config file overrides or adds::

    [models."llama3.1:8b"]          # any model name, e.g. an Azure deployment
    context_window = 16384
    max_output_tokens = 2048

    [prices."gpt-4o-mini"]          # USD per million tokens
    input = 0.15
    cached_input = 0.075
    output = 0.60

A model without a price costs 0 in the report (local servers) and cannot be
used with ``--max-cost``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError
from ..tables import check_table

MODEL_KEYS = ("context_window", "max_output_tokens")  # of a [models."name"] table
PRICE_KEYS = ("input", "cached_input", "output")  # of a [prices."name"] table: USD per 1M tokens


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float
    cached_input: float
    output: float

    def cost(self, prompt_tokens: int, cached_tokens: int, completion_tokens: int) -> float:
        cached = min(cached_tokens, prompt_tokens)
        return ((prompt_tokens - cached) * self.input + cached * self.cached_input
                + completion_tokens * self.output) / 1_000_000


@dataclass(frozen=True)
class ModelCard:
    context_window: int | None = None
    max_output_tokens: int | None = None
    price: Price | None = None


# Longest prefix wins, so dated names ("gpt-4o-mini-2024-07-18") find their family.
BUILT_IN: dict[str, ModelCard] = {
    "gpt-4o-mini": ModelCard(128_000, 16_384, Price(0.15, 0.075, 0.60)),
    "gpt-4o": ModelCard(128_000, 16_384, Price(2.50, 1.25, 10.00)),
    "gpt-4.1-nano": ModelCard(1_047_576, 32_768, Price(0.10, 0.025, 0.40)),
    "gpt-4.1-mini": ModelCard(1_047_576, 32_768, Price(0.40, 0.10, 1.60)),
    "gpt-4.1": ModelCard(1_047_576, 32_768, Price(2.00, 0.50, 8.00)),
    "gpt-5-nano": ModelCard(400_000, 128_000, Price(0.05, 0.005, 0.40)),
    "gpt-5-mini": ModelCard(400_000, 128_000, Price(0.25, 0.025, 2.00)),
    "gpt-5": ModelCard(400_000, 128_000, Price(1.25, 0.125, 10.00)),
    "o4-mini": ModelCard(200_000, 100_000, Price(1.10, 0.275, 4.40)),
}


def model_card(model: str | None, config: Mapping[str, Any] | None = None,
               where: str = "config") -> ModelCard:
    """The built-in card for ``model``, with the config's [models] and [prices] on top;
    ``where`` (the config file) starts the error a bad table gets."""
    config = config or {}
    card = _built_in(model)
    if model is None:
        return card
    limits = check_table(_table(config, "models", model, where), MODEL_KEYS,
                         f'{where}: [models."{model}"]')
    price = _table(config, "prices", model, where)
    return ModelCard(
        context_window=_positive_int(limits, "context_window", model, where)
        or card.context_window,
        max_output_tokens=(_positive_int(limits, "max_output_tokens", model, where)
                           or card.max_output_tokens),
        price=_price(price, model, where) if price else card.price,
    )


def check_model_tables(config: Mapping[str, Any], where: str) -> None:
    """Every ``[models."name"]`` and ``[prices."name"]`` table of a config file checked, not
    only the model a run uses, and before any call is paid for: a price of ``inf`` made a
    cost of NaN, which the ledger refused after the calls were made."""
    for section in ("models", "prices"):
        for model in _tables(config, section, where):
            model_card(model, config, where)


def _built_in(model: str | None) -> ModelCard:
    name = (model or "").lower().rsplit("/", 1)[-1]
    for prefix in sorted(BUILT_IN, key=len, reverse=True):
        if name.startswith(prefix):
            return BUILT_IN[prefix]
    return ModelCard()


def _tables(config: Mapping[str, Any], section: str, where: str, model: str = "my-model"
            ) -> Mapping[str, Any]:
    tables = config.get(section, {})
    if not isinstance(tables, Mapping):
        raise ConfigError(f"{where}: [{section}] must be a table of models, e.g. "
                          f'[{section}."{model}"]')
    return tables


def _table(config: Mapping[str, Any], section: str, model: str, where: str
           ) -> Mapping[str, Any]:
    table = _tables(config, section, where, model).get(model, {})
    if not isinstance(table, Mapping):
        raise ConfigError(f'{where}: [{section}."{model}"] must be a table')
    return table


def _positive_int(table: Mapping[str, Any], key: str, model: str, where: str) -> int | None:
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ConfigError(f'{where}: [models."{model}"] {key} must be a positive integer, '
                          f"not {value!r}")
    return value


# USD per million tokens: far above any model's, and low enough that no run's cost overflows
MAX_PRICE = 1_000_000


def _price(table: Mapping[str, Any], model: str, where: str) -> Price:
    values = {}
    for key in PRICE_KEYS:
        value = table.get(key, table.get("input") if key == "cached_input" else None)
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not (
                math.isfinite(value) and 0 <= value <= MAX_PRICE):
            given = "" if value is None else f", not {value!r}"
            raise ConfigError(f'{where}: [prices."{model}"] needs {key} = USD per million '
                              f"tokens (a number from 0 to {MAX_PRICE:,}{given})")
        values[key] = float(value)
    unknown = sorted(set(table) - set(values))
    if unknown:
        raise ConfigError(f'{where}: [prices."{model}"] has unknown keys {", ".join(unknown)}; '
                          f"use {', '.join(PRICE_KEYS)}")
    return Price(**values)

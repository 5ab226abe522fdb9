"""Proxies and private CAs: the providers' SDK clients honour ``HTTP_PROXY`` / ``HTTPS_PROXY`` /
``NO_PROXY`` and ``SSL_CERT_FILE`` (httpx2 with ``trust_env`` on, read when a client is built).

Real turns go from the real provider through a local forward proxy (``tests.support.http_proxy``)
to the local test server, over plain HTTP and over TLS through ``CONNECT`` with a throwaway CA;
each test checks both that the answer arrived and what the proxy carried.  The module is written
around ``provider_at(base_url)``: one ``Case`` per provider.
"""

from __future__ import annotations

import re
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from jupyter_turns import Chat
from jupyter_turns.engine.retry import RetryPolicy
from jupyter_turns.model.events import ChatRequest, ErrorEvent
from jupyter_turns.model.stream_events import MessageDelta, Part
from jupyter_turns.providers.anthropic import AnthropicProvider
from jupyter_turns.providers.base import Provider, Request
from jupyter_turns.providers.openai_chat import OpenAIChatProvider
from jupyter_turns.providers.openai_responses import OpenAIResponsesProvider
from tests.support.anthropic_server import AnthropicTestServer, Reply, split_events
from tests.support.anthropic_sse import sse_text_response
from tests.support.http_proxy import Carried, ForwardProxy
from tests.support.openai_chat_replies import chunk_body
from tests.support.openai_sse import Text, responses_body
from tests.support.throwaway_ca import ThrowawayCA, make_ca

from .conftest import FakeClock

_ENVIRONMENT = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUEST_METHOD",  # set, urllib ignores HTTP_PROXY (the CGI rule)
)
_PIECES = ["Hello", " through", " the proxy"]
_REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Case:
    """A provider, built for a base URL, and the recorded shape of a whole text answer."""

    provider_at: Callable[[str], Provider]
    answer: Callable[[list[str]], str]  # the SSE body of an answer made of these text pieces
    path: str  # where the provider posts a turn

    def reply(self) -> Reply:
        return Reply.sse(self.answer(_PIECES), expect=("POST", self.path))


def anthropic_at(base_url: str) -> Provider:
    return AnthropicProvider("claude-haiku-4-5", api_key="test-key", base_url=base_url)


def openai_at(base_url: str) -> Provider:
    return OpenAIResponsesProvider("gpt-5-mini", api_key="test-key", base_url=f"{base_url}/v1")


def openai_chat_at(base_url: str) -> Provider:
    return OpenAIChatProvider("llama", api_key="test-key", base_url=f"{base_url}/v1")


def _responses_text(pieces: list[str]) -> str:
    return responses_body([Text(pieces)])


CASES = [
    pytest.param(Case(anthropic_at, sse_text_response, "/v1/messages"), id="anthropic"),
    pytest.param(Case(openai_at, _responses_text, "/v1/responses"), id="openai"),
    pytest.param(Case(openai_chat_at, chunk_body, "/v1/chat/completions"), id="openai-chat"),
]


@pytest.fixture(params=CASES)
def case(request: pytest.FixtureRequest) -> Case:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture(autouse=True)
def environment(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No proxy and no CA bundle from the machine's environment, in either case."""
    for name in _ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    return monkeypatch


@pytest.fixture
def proxy() -> Iterator[ForwardProxy]:
    with ForwardProxy() as proxy:
        yield proxy
    assert proxy.failures == [] and proxy.refused == []


@pytest.fixture
def server() -> Iterator[AnthropicTestServer]:
    with AnthropicTestServer() as server:
        yield server


@pytest.fixture
def ca(tmp_path: Path) -> ThrowawayCA:
    return make_ca(tmp_path)


@pytest.fixture
def tls_server(ca: ThrowawayCA) -> Iterator[AnthropicTestServer]:
    with AnthropicTestServer(tls=ca.server_context()) as server:
        yield server


def _chat(provider: Provider, clock: FakeClock) -> Chat:
    return Chat(provider=provider, thinking="off", sleep=clock.sleep, clock=clock, rand=lambda: 0.5)


def _origin(server: AnthropicTestServer) -> str:
    return server.url.split("://", 1)[1]


async def test_http_proxy_carries_the_turn(
    case: Case,
    proxy: ForwardProxy,
    server: AnthropicTestServer,
    environment: pytest.MonkeyPatch,
    clock: FakeClock,
) -> None:
    environment.setenv("HTTP_PROXY", proxy.url)
    environment.setenv("NO_PROXY", "")
    server.enqueue(case.reply())
    turn = await _chat(case.provider_at(server.url), clock).send("hi")
    assert turn.outcome == "complete" and turn.text == "".join(_PIECES)
    assert proxy.carried == [Carried("POST", server.url + case.path)]
    assert [r.path for r in server.requests] == [case.path]  # the proxy asked in origin form
    server.assert_all_served()


async def test_the_proxy_passes_the_event_stream_on_as_it_arrives(
    case: Case, proxy: ForwardProxy, server: AnthropicTestServer, environment: pytest.MonkeyPatch
) -> None:
    """The server holds the rest of the answer until the client has shown the first text: a
    proxy (or client) that waited for the whole body would never get there."""
    environment.setenv("HTTP_PROXY", proxy.url)
    release = threading.Event()
    body = case.answer(_PIECES)
    first = f'"{_PIECES[0]}"'.encode()
    shown = next(i for i, event in enumerate(split_events(body)) if first in event) + 1
    held = Reply.hang_after(body, shown, release, timeout=10.0)
    server.enqueue(replace(held, expect=("POST", case.path)))
    request = Request(events=(ChatRequest(content="hi"),), thinking="off")
    texts = []
    async for item in case.provider_at(server.url).stream(request):
        if isinstance(item, Part) and isinstance(item.content, MessageDelta):
            texts.append(item.content.text)
            release.set()
    assert texts == _PIECES and proxy.carried == [Carried("POST", server.url + case.path)]
    server.assert_all_served()


async def test_a_stream_broken_behind_the_proxy_is_retried_through_it(
    case: Case,
    proxy: ForwardProxy,
    server: AnthropicTestServer,
    environment: pytest.MonkeyPatch,
    clock: FakeClock,
) -> None:
    environment.setenv("HTTP_PROXY", proxy.url)
    broken = Reply.reset_after(case.answer(_PIECES), 1)  # the first event, then a TCP RST
    server.enqueue(replace(broken, expect=("POST", case.path)), case.reply())
    turn = await _chat(case.provider_at(server.url), clock).send("hi")
    assert turn.outcome == "complete" and turn.text == "".join(_PIECES)
    assert clock.sleeps == [1.0]
    assert proxy.carried == [Carried("POST", server.url + case.path)] * 2
    server.assert_all_served()


async def test_a_proxy_that_is_down_is_a_connection_error_not_a_way_around_it(
    case: Case, server: AnthropicTestServer, environment: pytest.MonkeyPatch, clock: FakeClock
) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    environment.setenv("HTTP_PROXY", f"http://127.0.0.1:{port}")
    server.enqueue(case.reply())
    turn = await _chat(case.provider_at(server.url), clock).send("hi")
    error = turn.events[-1]
    assert isinstance(error, ErrorEvent) and error.error_type == "connection"
    assert "Connection error." not in error.message  # the transport's words, not the SDK's
    assert len(clock.sleeps) == RetryPolicy().max_attempts - 1  # retried: a proxy may come back
    assert server.requests == [] and server.pending == 1


async def test_no_proxy_bypasses_the_proxy(
    case: Case,
    proxy: ForwardProxy,
    server: AnthropicTestServer,
    environment: pytest.MonkeyPatch,
    clock: FakeClock,
) -> None:
    environment.setenv("HTTP_PROXY", proxy.url)
    environment.setenv("NO_PROXY", "127.0.0.1")
    server.enqueue(case.reply())
    turn = await _chat(case.provider_at(server.url), clock).send("hi")
    assert turn.outcome == "complete" and turn.text == "".join(_PIECES)
    assert proxy.carried == [] and len(server.requests) == 1
    server.assert_all_served()


async def test_https_proxy_tunnels_to_a_server_trusted_through_ssl_cert_file(
    case: Case,
    proxy: ForwardProxy,
    tls_server: AnthropicTestServer,
    ca: ThrowawayCA,
    environment: pytest.MonkeyPatch,
    clock: FakeClock,
) -> None:
    environment.setenv("HTTPS_PROXY", proxy.url)
    environment.setenv("SSL_CERT_FILE", str(ca.ca_pem))
    tls_server.enqueue(case.reply())
    turn = await _chat(case.provider_at(tls_server.url), clock).send("hi")
    assert turn.outcome == "complete" and turn.text == "".join(_PIECES)
    assert proxy.carried == [Carried("CONNECT", _origin(tls_server))]
    assert [r.path for r in tls_server.requests] == [case.path]
    tls_server.assert_all_served()


async def test_an_untrusted_certificate_fails_clearly_and_loses_nothing(
    case: Case,
    proxy: ForwardProxy,
    tls_server: AnthropicTestServer,
    ca: ThrowawayCA,
    environment: pytest.MonkeyPatch,
    clock: FakeClock,
) -> None:
    environment.setenv("HTTPS_PROXY", proxy.url)
    tls_server.enqueue(case.reply())
    chat = _chat(case.provider_at(tls_server.url), clock)
    turn = await chat.send("first question")
    assert turn.outcome == "error"
    error = turn.events[-1]
    assert isinstance(error, ErrorEvent) and error.error_type == "connection"
    assert "certificate" in error.message and "SSL_CERT_FILE" in error.message
    assert clock.sleeps == []  # no retry mends an untrusted certificate
    assert proxy.carried == [Carried("CONNECT", _origin(tls_server))]
    assert tls_server.requests == [] and tls_server.pending == 1
    chat.conversation.check_sendable()
    assert [e.kind for e in chat.conversation.events][:1] == ["chat_request"]
    # the CA made known (a client built from now on reads it): the thread goes on, whole
    environment.setenv("SSL_CERT_FILE", str(ca.ca_pem))
    again = await chat.send("second question", provider=case.provider_at(tls_server.url))
    assert again.outcome == "complete" and again.text == "".join(_PIECES)
    sent = tls_server.requests[0].raw.decode()
    assert "first question" in sent and "second question" in sent
    tls_server.assert_all_served()


def test_nothing_in_the_package_turns_trust_env_off() -> None:
    """trust_env=False would silently drop the proxy variables and SSL_CERT_FILE."""
    off = re.compile(r"trust_env\s*=\s*False")
    found = [
        str(path.relative_to(_REPO))
        for path in sorted((_REPO / "jupyter_turns").rglob("*.py"))
        if off.search(path.read_text(encoding="utf-8"))
    ]
    assert found == []

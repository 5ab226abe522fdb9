"""Pytest fixtures for the local Anthropic server.

Use them from a test module or a conftest with
``from tests.support.fixtures import anthropic_client, anthropic_server  # noqa: F401``
(or ``pytest_plugins = ["tests.support.fixtures"]`` in the root conftest).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import anthropic
import pytest
import pytest_asyncio

from .anthropic_server import AnthropicTestServer

__all__ = ["anthropic_client", "anthropic_server"]


@pytest.fixture
def anthropic_server() -> Iterator[AnthropicTestServer]:
    """A started server, closed (connections ended, threads joined) after the test."""
    with AnthropicTestServer() as server:
        yield server


@pytest_asyncio.fixture
async def anthropic_client(
    anthropic_server: AnthropicTestServer,
) -> AsyncIterator[anthropic.AsyncAnthropic]:
    """The real SDK client pointed at ``anthropic_server``, without retries."""
    async with anthropic.AsyncAnthropic(
        api_key="test-key", base_url=anthropic_server.url, max_retries=0
    ) as client:
        yield client

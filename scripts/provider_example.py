"""The example notebook of the providers (see make_examples.py): examples/providers.ipynb.

It is recorded against the project's local test servers (one Anthropic-shaped, one OpenAI
Responses-shaped: :func:`provider_recording`) and replays offline afterwards, as replay.ipynb.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

from nbformat.v4 import new_code_cell, new_markdown_cell

__all__ = ["PROVIDERS", "provider_recording"]

RAINFALL = '''\
from jupyter_turns import tool

@tool(run="unattended")  # runs without asking: this notebook also runs headless (nbval)
def rainfall(city: str) -> str:
    """Average yearly rainfall of a city."""
    return {"Oslo": "763 mm", "Lima": "16 mm", "Pune": "722 mm"}[city]'''

QUESTION = "Which is wetter, Oslo or Lima? Use the rainfall tool and answer with a short table."
CLAUDE = "--provider anthropic --model claude-haiku-4-5"
GPT = "--provider openai --model gpt-5-mini"

INTRO = (
    "# Providers: Claude, OpenAI and OpenAI-compatible servers\n\n"
    '`%%chat --provider NAME` (or `%config ChatMagics.provider = "NAME"`) picks who answers; '
    "`--model` picks the model. Every provider streams through the same widget: reasoning, "
    "tool cards that ask for approval, the markdown answer, and a footer naming the model "
    "(and the endpoint, when it is not the provider's default).\n\n"
    "| `--provider` | what | what it needs |\n"
    "|---|---|---|\n"
    "| `anthropic` (default) | Claude, Anthropic API | `ANTHROPIC_API_KEY` or `%chat key` |\n"
    "| `openai` | OpenAI, Responses API | `OPENAI_API_KEY` or `%chat key openai`; "
    "`pip install 'jupyter_turns[openai]'` |\n"
    "| `openai-chat` | any Chat Completions server (llama.cpp, vLLM, LM Studio, OpenRouter…) "
    "| `--base-url` and `--model`; a key only if the server asks |\n"
    "| `ollama` | a local Ollama | a running Ollama and `--model` |\n"
    "| `bedrock` | Claude on Amazon Bedrock | AWS credentials, `--region`; "
    "`[bedrock]` extra |\n"
    "| `vertex` | Claude on Google Vertex AI | Google ADC (`gcloud auth application-default "
    "login`), `--region`, `--project`; `[vertex]` extra |\n"
    "| `scripted` | offline, deterministic | nothing |\n\n"
    "Keys never go in a cell (its source is saved): use the environment, a `.env` file next to "
    "the notebook, or `%chat key` / `%chat key openai` (a hidden prompt). A key is sent only "
    "to the endpoint it was given for: `OPENAI_API_KEY` goes to `OPENAI_BASE_URL` (by default "
    "api.openai.com), and to a `--base-url` of your own only once you give it there with "
    "`%chat key openai`.\n\n"
    "This notebook was recorded against the project's local test servers standing in for the "
    "two APIs, and **replays offline**: with no key set, each chat cell plays its saved turn "
    "(see replay.ipynb); the tool runs again for real."
)

SWITCHING = (
    "## Switching a thread's provider\n\n"
    "A thread can change provider between cells: the history goes along, converted (text, "
    "tool calls and results, images). Reasoning cannot: each API reads only its own "
    "(Claude's signed thinking, OpenAI's encrypted reasoning items), so another provider's "
    "reasoning is **kept in the notebook but not sent**, and switching back sends it again. "
    "The cell says so once, when the thread switches. Here the Claude thread above continues "
    "with the OpenAI model."
)

LOCAL = (
    "## OpenAI-compatible servers (llama.cpp, vLLM, Ollama…)\n\n"
    "A server that speaks Chat Completions needs its URL and the model it serves:\n\n"
    "```\n"
    "%%chat --provider openai-chat --base-url http://127.0.0.1:8080/v1 --model qwen3-8b\n"
    "Which is wetter, Oslo or Lima?\n"
    "```\n\n"
    "`--provider ollama --model llama3.2` finds Ollama at `OLLAMA_HOST` (default "
    "`http://localhost:11434`). Such a server's reasoning (`reasoning_content`) is shown but "
    "never sent back; a key is sent only if you give one for that server (`%chat key openai`).\n\n"
    "That cell is shown here, not run: replay `auto` replays only providers that need a key "
    "and have none, and a local server needs no key, so under nbval the cell would try to "
    "reach the server instead of replaying. (`JUPYTER_TURNS_REPLAY=on` replays every cell.)\n\n"
    "## Cloud platforms and limits\n\n"
    "* `--provider bedrock --region us-east-1` uses the AWS credential chain (environment, "
    "profile, SSO or role; or a Bedrock API key in `AWS_BEARER_TOKEN_BEDROCK`), and Bedrock's "
    "model names (`us.anthropic.claude-sonnet-4-5-20250929-v1:0`); the region defaults to "
    "`AWS_REGION`. `--provider vertex --region us-east5 --project my-project` uses Google's "
    "application default credentials (`CLOUD_ML_REGION` and `ANTHROPIC_VERTEX_PROJECT_ID` "
    "are the defaults). Claude's reasoning is valid across the Anthropic API, Bedrock and "
    "Vertex, so switching among those three sends it along.\n"
    "* An administrator can limit what threads use, in `ipython_config.py` or a system-wide "
    "config (a notebook cannot widen it):\n\n"
    "  ```python\n"
    '  c.ChatMagics.allowed_providers = ["bedrock", "scripted"]\n'
    '  c.ChatMagics.allowed_models = ["claude-haiku-*"]\n'
    "  ```\n\n"
    "  A cell asking for anything else fails before a request is sent."
)

PROVIDERS = [
    new_markdown_cell(INTRO),
    new_code_cell("%load_ext jupyter_turns"),
    new_code_cell(RAINFALL),
    new_markdown_cell(
        "The same question to Claude and to an OpenAI model, each in a thread of its own "
        "(`--thread`). Both think first (`--reasoning full` unfolds it), call the tool, then "
        "answer."
    ),
    new_code_cell(f"%%chat --thread claude {CLAUDE} --reasoning full\n{QUESTION}"),
    new_code_cell(f"%%chat --thread gpt {GPT} --reasoning full\n{QUESTION}"),
    new_markdown_cell(SWITCHING),
    new_code_cell(f"%%chat --thread claude {GPT}\nAnd how does Pune compare?"),
    new_markdown_cell(LOCAL),
]


@contextlib.contextmanager
def provider_recording() -> Iterator[dict[str, str]]:
    """The environment providers.ipynb is recorded in: keys and the local test servers'
    URLs, each server playing its model's turns; every reply must have been asked for."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.support.anthropic_server import AnthropicTestServer, Reply
    from tests.support.anthropic_sse import (
        Text,
        Thinking,
        ToolUse,
        sse_message,
        sse_text_response,
    )
    from tests.support.openai_sse import Call, Reasoning, for_responses, responses_body
    from tests.support.openai_sse import Text as Said

    usage = {
        "input_tokens": 412,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 96,
        "output_tokens_details": {"reasoning_tokens": 64},
        "total_tokens": 508,
    }
    with AnthropicTestServer() as claude, AnthropicTestServer() as gpt:
        claude.enqueue(
            Reply.sse(
                sse_message(
                    [
                        Thinking(["Two cities: I need both yearly rainfalls ", "from the tool."]),
                        Text(["I'll look both up."]),
                        ToolUse("rainfall", {"city": "Oslo"}, id="toolu_example_oslo"),
                        ToolUse("rainfall", {"city": "Lima"}, id="toolu_example_lima"),
                    ],
                    stop_reason="tool_use",
                )
            ),
            Reply.sse(
                sse_text_response(
                    [
                        "| city | rain per year |\n|---|---|\n| Oslo | 763 mm |\n",
                        "| Lima | 16 mm |\n\n**Oslo** is far wetter: Lima, on the ",
                        "coastal desert, gets about 2% of Oslo's rain.",
                    ]
                )
            ),
        )
        gpt.enqueue(
            for_responses(
                Reply.sse(
                    responses_body(
                        [
                            Reasoning(
                                ["**Comparing rainfall**\n\n", "I'll ask the tool for both."]
                            ),
                            Call("rainfall", ['{"city":', '"Oslo"}'], call_id="call_example_oslo"),
                            Call("rainfall", ['{"city":', '"Lima"}'], call_id="call_example_lima"),
                        ],
                        usage=usage,
                    )
                )
            ),
            for_responses(
                Reply.sse(
                    responses_body(
                        [
                            Said(
                                [
                                    "| City | Yearly rainfall |\n|---|---|\n",
                                    "| Oslo | 763 mm |\n| Lima | 16 mm |\n\n",
                                    "Oslo is wetter, by about 750 mm a year.",
                                ]
                            )
                        ],
                        usage=usage,
                    )
                )
            ),
            for_responses(
                Reply.sse(
                    responses_body(
                        [Call("rainfall", ['{"city":"Pune"}'], call_id="call_example_pune")],
                        usage=usage,
                    )
                )
            ),
            for_responses(
                Reply.sse(
                    responses_body(
                        [
                            Said(
                                [
                                    "Pune gets about **722 mm** a year: close to Oslo's ",
                                    "763 mm, but it falls in the monsoon months (June to ",
                                    "September), while Oslo's is spread over the year.",
                                ]
                            )
                        ],
                        usage=usage,
                    )
                )
            ),
        )
        yield {
            "ANTHROPIC_API_KEY": "sk-example-not-a-key",
            "ANTHROPIC_BASE_URL": claude.url,
            "OPENAI_API_KEY": "sk-example-not-a-key",
            "OPENAI_BASE_URL": f"{gpt.url}/v1",
        }
        claude.assert_all_served()
        gpt.assert_all_served()

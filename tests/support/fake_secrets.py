"""Made-up secrets shaped like real ones, for the redaction tests (never a real key).

Each is built from a seeded generator, so a run is repeatable and nothing secret is committed:
``fake_tokens()`` gives every token shape :mod:`jupyter_turns.redaction` recognises, with the
kind its label names.
"""

from __future__ import annotations

import base64
import json
import random
import string

__all__ = ["ALNUM", "fake_key_in_use", "fake_pem", "fake_tokens", "random_chars"]

ALNUM = string.ascii_letters + string.digits
_RANDOM = random.Random(24)


def random_chars(n: int, alphabet: str = ALNUM) -> str:
    return "".join(_RANDOM.choice(alphabet) for _ in range(n))


def _b64url(data: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


def fake_pem(kind: str = "RSA ") -> str:
    """A private key block: BEGIN line, five lines of base64, END line."""
    body = "\n".join(random_chars(64, ALNUM + "+/") for _ in range(5))
    return f"-----BEGIN {kind}PRIVATE KEY-----\n{body}\n-----END {kind}PRIVATE KEY-----"


def fake_key_in_use() -> str:
    return "sk-ant-api03-" + random_chars(80, ALNUM + "-_") + "AA"


def fake_tokens() -> dict[str, tuple[str, str]]:
    """name -> (token, the kind its label names)."""
    upper = string.ascii_uppercase + string.digits
    jwt = ".".join(
        [
            _b64url({"alg": "HS256", "typ": "JWT"}),
            _b64url({"sub": "1234567890", "name": "Ada"}),
            random_chars(43, ALNUM + "-_"),
        ]
    )
    return {
        "anthropic": ("sk-ant-admin01-" + random_chars(60, ALNUM + "-_"), "Anthropic key"),
        "openai project": ("sk-proj-" + random_chars(120, ALNUM + "-_"), "OpenAI key"),
        "openai legacy": ("sk-" + random_chars(48), "OpenAI key"),
        "aws id": ("AKIA" + random_chars(16, upper), "AWS key"),
        "aws session id": ("ASIA" + random_chars(16, upper), "AWS key"),
        "github classic": ("ghp_" + random_chars(36), "GitHub token"),
        "github oauth": ("gho_" + random_chars(36), "GitHub token"),
        "github fine-grained": (
            "github_pat_" + random_chars(22) + "_" + random_chars(59),
            "GitHub token",
        ),
        "slack": (
            "xoxb-" + random_chars(12, string.digits) + "-" + random_chars(24),
            "Slack token",
        ),
        "google": ("AIza" + random_chars(35, ALNUM + "-_"), "Google API key"),
        "jwt": (jwt, "JWT"),
        "rsa private key": (fake_pem(), "private key"),
        "openssh private key": (fake_pem("OPENSSH "), "private key"),
        "pkcs8 private key": (fake_pem(""), "private key"),
    }

"""An untrusted server certificate, as every provider reports it (their SDKs share ``httpx2``).

No retry mends it: it means a TLS-inspecting proxy or a private endpoint whose certificate
authority the client does not know. The user names that CA with ``SSL_CERT_FILE``, which the SDK
clients read, like ``HTTPS_PROXY`` / ``HTTP_PROXY`` / ``NO_PROXY``, when they are built: no
provider turns ``trust_env`` off. Each provider's ``classify`` asks :func:`untrusted_certificate`
and adds :data:`CERTIFICATE_HINT`.
"""

from __future__ import annotations

import ssl

__all__ = ["CERTIFICATE_HINT", "untrusted_certificate"]

CERTIFICATE_HINT = (
    "If a proxy or a private certificate authority stands in between, set SSL_CERT_FILE to its "
    "CA bundle (a PEM file) in the environment Jupyter starts from."
)


def untrusted_certificate(error: BaseException) -> bool:
    """True when the handshake failed because the server's certificate was not trusted, however
    deep in the chain of causes the SDK and ``httpx2`` wrapped it."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, ssl.SSLCertVerificationError):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False

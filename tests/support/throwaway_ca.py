"""A throwaway certificate authority and a server certificate for 127.0.0.1, made per test.

What a company's TLS-inspecting proxy or a private endpoint looks like to a client: a server
certificate no system store trusts, signed by a CA whose PEM the user can point ``SSL_CERT_FILE``
at.  Made with ``cryptography`` (EC P-256, valid for a day); nothing is written but the PEMs in
the given directory.
"""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = ["ThrowawayCA", "make_ca"]


@dataclass(frozen=True)
class ThrowawayCA:
    ca_pem: Path  # the CA certificate alone: what SSL_CERT_FILE points at
    cert_pem: Path  # the server certificate for 127.0.0.1 (IP SAN)
    key_pem: Path  # the server certificate's private key

    def server_context(self) -> ssl.SSLContext:
        """A server-side context presenting the 127.0.0.1 certificate."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert_pem, self.key_pem)
        return context


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _builder(
    subject: str, issuer: str, public_key: ec.EllipticCurvePublicKey
) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(_name(issuer))
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
    )


def make_ca(directory: Path, host: str = "127.0.0.1") -> ThrowawayCA:
    """A new CA and a server certificate for ``host`` (an IP address), written to
    ``directory``."""
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = "jupyter_turns test CA"
    ca_cert = (
        _builder(ca_name, ca_name, ca_key.public_key())
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        _builder(host, ca_name, key.public_key())
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(host))]), False
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
        )
        .sign(ca_key, hashes.SHA256())
    )
    made = ThrowawayCA(directory / "ca.pem", directory / "server.pem", directory / "server-key.pem")
    made.ca_pem.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    made.cert_pem.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    made.key_pem.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return made

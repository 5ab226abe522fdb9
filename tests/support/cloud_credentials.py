"""Fake AWS and Google credentials in a kernel's environment, for the cloud providers' tests.

Nothing real is read and nothing is refreshed: the AWS config files are empty and the instance
metadata service is never asked; Google's application default credentials are an authorized
user's file whose access token is valid until 2099, which the SDK sends as it is (a refresh
would go to Google, and the test would fail). The token values are made up
(:mod:`tests.support.fake_secrets`).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from .fake_secrets import ALNUM

__all__ = [
    "AWS_REGION",
    "BEDROCK_API_KEY",
    "GOOGLE_PROJECT",
    "GOOGLE_REGION",
    "GOOGLE_TOKEN",
    "aws_env",
    "google_env",
]

_RANDOM = random.Random(39)  # its own: the redaction tests' values stay as they were
AWS_REGION = "us-east-1"
# the shapes of a Bedrock API key and of an OAuth access token
BEDROCK_API_KEY = "ABSK" + "".join(_RANDOM.choices(ALNUM + "+/", k=120))
GOOGLE_TOKEN = "ya29." + "".join(_RANDOM.choices(ALNUM + "-_", k=120))
GOOGLE_PROJECT, GOOGLE_REGION = "test-project", "us-east5"


def aws_env(tmp: Path, **credentials: str) -> dict[str, str]:
    """The region and ``credentials`` (``AWS_BEARER_TOKEN_BEDROCK=...``, or the access key's
    ``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY``), with no AWS config of the machine."""
    empty = tmp / "aws-empty"
    empty.write_text("")
    return {
        "AWS_REGION": AWS_REGION,
        "AWS_CONFIG_FILE": str(empty),
        "AWS_SHARED_CREDENTIALS_FILE": str(empty),
        "AWS_EC2_METADATA_DISABLED": "true",
        **credentials,
    }


def google_env(tmp: Path, token: str = GOOGLE_TOKEN) -> dict[str, str]:
    """Application default credentials whose access token is ``token``, the region and the
    project."""
    adc = tmp / "adc.json"
    adc.write_text(
        json.dumps(
            {
                "type": "authorized_user",
                "client_id": "test-client.apps.googleusercontent.com",
                "client_secret": "test-client-secret",
                "refresh_token": "test-refresh-token",
                "token": token,
                "expiry": "2099-01-01T00:00:00Z",
            }
        )
    )
    return {
        "GOOGLE_APPLICATION_CREDENTIALS": str(adc),
        "CLOUDSDK_CONFIG": str(tmp / "gcloud"),
        "CLOUD_ML_REGION": GOOGLE_REGION,
        "ANTHROPIC_VERTEX_PROJECT_ID": GOOGLE_PROJECT,
    }

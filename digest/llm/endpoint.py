"""Which endpoint and which client: the base URL checked, Azure chosen explicitly.

A base URL must be an http(s) URL with a host, or the run stops at once with a
ConfigError (exit 2) instead of retrying an address that can never work. Azure
OpenAI's client is used when the config says ``provider = "azure"`` or the host is
one of Azure's; ``api_version`` alone never switches to it, so a local server
with a stray ``OPENAI_API_VERSION`` stays on the plain OpenAI client.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..errors import ConfigError
from ..links import is_web_url
from ..redaction import mask_secret, url_for_logs
from .base import BackendSettings

if TYPE_CHECKING:
    import openai

logger = logging.getLogger("digest.llm")

AZURE_HOSTS = (".openai.azure.com", ".cognitiveservices.azure.com")


def make_client(settings: BackendSettings) -> openai.OpenAI:
    """The official client for this endpoint: Azure's for its dated API, else the plain one."""
    import openai

    from .deadline import LimitedClient

    # Every request passes its own time limit (``pacing``), for the whole request
    # (``deadline.request_limit``); this is the client's fallback.
    common: Mapping[str, Any] = {
        "timeout": settings.timeout_s or 600.0, "max_retries": 0,
        "http_client": LimitedClient()}
    api_key = checked_api_key(settings.api_key)
    base_url = checked_base_url(settings.base_url, api_key)
    azure = uses_azure(settings)
    if azure and settings.api_version:  # the dated API; Azure's v1 API needs only a base URL
        if not base_url:
            raise ConfigError('provider = "azure" needs a base URL: '
                              "https://RESOURCE.openai.azure.com", setting="base_url")
        return openai.AzureOpenAI(api_key=api_key, api_version=settings.api_version,
                                  azure_endpoint=base_url, **common)
    if settings.api_version:
        logger.warning("api_version is set but %s is no Azure endpoint: it is ignored (set "
                       'provider = "azure" in the config if it is one)',
                       url_for_logs(base_url) if base_url else "the URL")
    return openai.OpenAI(api_key=api_key or "not-needed",  # local servers take any key
                         base_url=base_url, **common)


def uses_azure(settings: BackendSettings) -> bool:
    """Azure OpenAI when the config says so, or when the endpoint is on Azure's hosts; never
    because ``api_version`` is set (a local server with a stray OPENAI_API_VERSION is not)."""
    if settings.provider not in (None, "openai", "azure"):
        raise ConfigError(f"provider {settings.provider!r} is unknown; use \"openai\" (any "
                          'OpenAI-compatible server) or "azure"')
    if settings.provider is not None:
        return settings.provider == "azure"
    host = (urlsplit(settings.base_url or "").hostname or "").rstrip(".")
    return host.endswith(AZURE_HOSTS)


def checked_api_key(key: str | None) -> str | None:
    """The key without the spaces or line end around it (an env file with CRLF line ends gives
    it a "\r"); a ConfigError if an HTTP header cannot carry what is left."""
    if key is None:
        return None
    key = key.strip()
    bad = next((i for i, char in enumerate(key) if not (char.isascii() and char.isprintable())
                or char.isspace()), None)
    if bad is not None:
        raise ConfigError(f"OPENAI_API_KEY holds a character no HTTP header can carry (at "
                          f"position {bad + 1} of {len(key)}: not ASCII, a space or a control "
                          "character): copy the key again", setting="api_key")
    return key


def checked_base_url(url: str | None, secret: str | None = None) -> str | None:
    """``url`` when it is an http(s) URL with a host, else a ConfigError saying how to fix it."""
    if url is None:
        return None
    usable = is_web_url(url)
    if not usable:
        shown = mask_secret(url_for_logs(url), secret)
        raise ConfigError(f"base URL {shown!r} is not an http(s) URL with a "
                          "host; give the server's address, e.g. http://localhost:11434/v1, or "
                          "leave it unset for OpenAI", setting="base_url")
    return url

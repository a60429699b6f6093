"""The page's Settings: which provider, URL, key and model the agent asks, and which settings win;
and the screen settings (scrcpy's live view and whether the agent looks at its frames).

The page's own Settings win over the defaults the server hands the page (``phone-agent serve
--model-base-url … --model …``). The API key is kept out of ``repr`` and ``to_public_json`` so it
never reaches a log. The page's URL (``?scrcpy=0``, ``?scrcpyMaxSize=``, ``?scrcpyMaxFps=``) wins
over the stored screen settings.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import parse_qs, urlsplit

# provider id -> (label, default base URL, how to let the page's origin in)
PROVIDERS: dict[str, tuple[str, str, str]] = {
    "openai": ("OpenAI", "https://api.openai.com/v1", "OpenAI allows browser requests; check the network."),
    "dashscope": (
        "DashScope",
        "https://dashscope.aliyuncs.com/compatible-mode/v1",
        "DashScope's compatible mode allows browser requests; check the network and the region's URL.",
    ),
    "ollama": (
        "Ollama",
        "http://127.0.0.1:11434/v1",
        "start Ollama with OLLAMA_ORIGINS set to this page's origin: OLLAMA_ORIGINS={origin} ollama serve",
    ),
    "vllm": (
        "vLLM",
        "http://127.0.0.1:8000/v1",
        "start vLLM with --allowed-origins '[\"{origin}\"]' (or a reverse proxy that adds CORS headers)",
    ),
    "lmstudio": (
        "LM Studio",
        "http://127.0.0.1:1234/v1",
        "turn on 'Enable CORS' in LM Studio's server settings (or lms server start --cors)",
    ),
    "openrouter": ("OpenRouter", "https://openrouter.ai/api/v1", "OpenRouter allows browser requests."),
    "custom": ("OpenAI-compatible server", "", "the server must answer CORS requests from {origin}"),
    "chrome": ("Chrome built-in model", "", ""),
}


@dataclass(frozen=True)
class ModelSettings:
    """Where the agent's model lives. ``provider`` is a key of ``PROVIDERS``."""

    provider: str = "custom"
    base_url: str = ""
    model: str = ""
    api_key: str = field(default="", repr=False)
    stream: bool = True
    temperature: float | None = None  # None: the provider's default (some models accept no other)
    request_timeout_ms: int = 120_000  # until the answer's headers arrive (and a whole non-streamed answer)
    idle_timeout_ms: int = 60_000  # the longest silence inside a streamed answer

    @property
    def provider_label(self) -> str:
        return PROVIDERS.get(self.provider, (self.provider,))[0]

    @property
    def is_complete(self) -> bool:
        if self.provider == "chrome":
            return True
        return bool(self.base_url and self.model)

    def cors_advice(self, origin: str) -> str:
        """How to let the page's origin reach this provider (for the CORS/network error)."""
        advice = PROVIDERS.get(self.provider, PROVIDERS["custom"])[2]
        if self.provider not in ("ollama", "vllm", "lmstudio"):
            advice += (
                "; local servers must allow the page's origin: Ollama with OLLAMA_ORIGINS={origin}, "
                "vLLM with --allowed-origins, LM Studio with 'Enable CORS'"
            )
        return advice.replace("{origin}", origin or "this page's origin")

    def to_public_json(self) -> dict[str, Any]:
        """The settings for display and logs: the key only as whether one is set."""
        return {
            "provider": self.provider,
            "baseUrl": self.base_url,
            "model": self.model,
            "apiKeySet": bool(self.api_key),
            "stream": self.stream,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ModelSettings:
        """From the page's stored settings or the server's defaults (camelCase or snake_case keys)."""

        def pick(*names: str, default: Any = "") -> Any:
            for name in names:
                if data.get(name) not in (None, ""):
                    return data[name]
            return default

        provider = str(pick("provider", default="custom"))
        base_url = str(pick("baseUrl", "base_url", default=PROVIDERS.get(provider, ("", ""))[1]))
        return cls(
            provider=provider,
            base_url=base_url.rstrip("/"),
            model=str(pick("model")),
            api_key=str(pick("apiKey", "api_key")),
            stream=bool(pick("stream", default=True)),
            request_timeout_ms=int(pick("requestTimeoutMs", "request_timeout_ms", default=120_000)),
            idle_timeout_ms=int(pick("idleTimeoutMs", "idle_timeout_ms", default=60_000)),
        )


def resolve_model_settings(
    page: ModelSettings | dict[str, Any] | None, server: ModelSettings | dict[str, Any] | None
) -> ModelSettings | None:
    """The settings to use: the page's when it has chosen a model, else the server's, else None.

    A page that set only a key (or only a model) keeps the server's other fields.
    """
    page_settings = ModelSettings.from_json(page) if isinstance(page, dict) else page
    server_settings = ModelSettings.from_json(server) if isinstance(server, dict) else server
    if page_settings is not None and page_settings.is_complete:
        return page_settings
    if server_settings is not None and server_settings.is_complete:
        if page_settings is None:
            return server_settings
        return replace(
            server_settings,
            api_key=page_settings.api_key or server_settings.api_key,
            model=page_settings.model or server_settings.model,
        )
    return None


# scrcpy's max_size (0: the phone's own size) and max_fps as the Settings accept them.
MAX_SIZE_LIMITS = (0, 4096)
MIN_MAX_SIZE = 128  # smaller than this (but not 0) makes a useless picture
MAX_FPS_LIMITS = (1, 120)


def _whole(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def valid_max_size(value: Any) -> int | None:
    """``value`` as scrcpy's max_size when it is one (0, or 128–4096), else None."""
    number = _whole(value)
    if number is None or number > MAX_SIZE_LIMITS[1] or 0 < number < MIN_MAX_SIZE:
        return None
    return number


def valid_max_fps(value: Any) -> int | None:
    """``value`` as scrcpy's max_fps when it is one (1–120), else None."""
    number = _whole(value)
    if number is None or not MAX_FPS_LIMITS[0] <= number <= MAX_FPS_LIMITS[1]:
        return None
    return number


@dataclass(frozen=True)
class ScreenSettings:
    """The live view and the agent's looks. ``live_looks``: while scrcpy runs, the agent takes its
    looks from the stream's latest frame instead of ``screencap`` (tools.screen_source). ``scrcpy``: the live
    view streams through scrcpy (else it polls ``screencap``), at most ``max_size`` pixels on the long
    side (0: the phone's own size) and ``max_fps`` frames a second."""

    live_looks: bool = True
    scrcpy: bool = True
    max_size: int = 1024
    max_fps: int = 30

    def to_json(self) -> dict[str, Any]:
        return {
            "liveLooks": self.live_looks,
            "scrcpy": self.scrcpy,
            "scrcpyMaxSize": self.max_size,
            "scrcpyMaxFps": self.max_fps,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> ScreenSettings:
        """From the stored settings; a missing or invalid value keeps its default."""
        data = data if isinstance(data, dict) else {}
        default = cls()
        size = valid_max_size(data.get("scrcpyMaxSize"))
        fps = valid_max_fps(data.get("scrcpyMaxFps"))
        return cls(
            live_looks=data.get("liveLooks") is not False,
            scrcpy=data.get("scrcpy") is not False,
            max_size=default.max_size if size is None else size,
            max_fps=default.max_fps if fps is None else fps,
        )

    def with_query(self, page_url: str) -> ScreenSettings:
        """With the page's URL applied: ``?scrcpy=0`` turns scrcpy off, ``?scrcpyMaxSize=N`` and
        ``?scrcpyMaxFps=N`` set the stream (invalid values are ignored)."""
        changes = {field: value for field, (_name, value) in _query_changes(page_url).items()}
        return replace(self, **changes)

    def overridden_by(self, page_url: str) -> list[str]:
        """The URL parameters that override these settings (for the card to say so): only those that
        take effect (an invalid ``?scrcpyMaxSize=abc`` is ignored, so it overrides nothing)."""
        return [name for name, _value in _query_changes(page_url).values()]


def _query_changes(page_url: str) -> dict[str, tuple[str, Any]]:
    """What the page's URL changes in the screen settings: field -> (URL parameter, value)."""
    query = parse_qs(urlsplit(page_url).query)

    def first(name: str) -> str | None:
        values = query.get(name)
        return values[0] if values else None

    changes: dict[str, tuple[str, Any]] = {}
    if (first("scrcpy") or "1") in ("0", "false", "off"):
        changes["scrcpy"] = ("scrcpy", False)
    size, fps = valid_max_size(first("scrcpyMaxSize")), valid_max_fps(first("scrcpyMaxFps"))
    if size is not None:
        changes["max_size"] = ("scrcpyMaxSize", size)
    if fps is not None:
        changes["max_fps"] = ("scrcpyMaxFps", fps)
    return changes

"""Model settings: the page's own settings win over the server's defaults; the key never shows."""

from __future__ import annotations

from phone_agent.agent.settings import PROVIDERS, ModelSettings, resolve_model_settings

SERVER = {
    "baseUrl": "http://127.0.0.1:11434/v1/",
    "model": "qwen2.5vl",
    "apiKey": "server-key",
    "provider": "ollama",
}


def test_the_pages_settings_win():
    page = {"provider": "openai", "model": "gpt-4o", "apiKey": "page-key"}
    chosen = resolve_model_settings(page, SERVER)
    assert (chosen.provider, chosen.base_url, chosen.model, chosen.api_key) == (
        "openai",
        PROVIDERS["openai"][1],
        "gpt-4o",
        "page-key",
    )


def test_the_servers_defaults_fill_in_when_the_page_has_chosen_nothing():
    chosen = resolve_model_settings(None, SERVER)
    assert (chosen.base_url, chosen.model, chosen.api_key) == (
        "http://127.0.0.1:11434/v1",
        "qwen2.5vl",
        "server-key",
    )
    with_key = resolve_model_settings({"apiKey": "mine"}, SERVER)
    assert with_key.api_key == "mine" and with_key.model == "qwen2.5vl"


def test_nothing_configured():
    assert resolve_model_settings(None, None) is None
    assert resolve_model_settings({"provider": "custom"}, {}) is None


def test_the_key_is_never_shown():
    settings = ModelSettings.from_json(SERVER)
    assert "server-key" not in repr(settings)
    assert "server-key" not in str(settings.to_public_json())
    assert settings.to_public_json()["apiKeySet"] is True


def test_the_chrome_model_needs_no_url():
    assert resolve_model_settings({"provider": "chrome"}, SERVER).provider == "chrome"


def test_the_model_for_the_settings():
    from phone_agent.agent.openai_client import OpenAIChatModel, chat_model_for

    http = None  # not used until a request is made

    assert chat_model_for(None, http) is None
    assert chat_model_for(ModelSettings(provider="custom", base_url="http://x/v1"), http) is None  # no model
    client = chat_model_for(ModelSettings.from_json(SERVER), http, "http://127.0.0.1:7788")
    assert isinstance(client, OpenAIChatModel) and client.url == "http://127.0.0.1:11434/v1/chat/completions"
    assert client.label == "Ollama model qwen2.5vl"
    chrome = ModelSettings(provider="chrome")
    assert chat_model_for(chrome, http) is None
    assert chat_model_for(chrome, http, builtin=lambda s: "prompt-api-adapter") == "prompt-api-adapter"

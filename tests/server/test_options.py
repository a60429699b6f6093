"""The server's options: defaults, and the page's default model taken from the command line."""

from __future__ import annotations

from phone_agent.server.options import DEFAULT_HOST, DEFAULT_PORT, ServerOptions, default_root


def test_the_defaults_are_loopback_7788_and_the_repository_the_page_is_served_from():
    options = ServerOptions()
    assert (options.host, options.port, DEFAULT_HOST, DEFAULT_PORT) == ("127.0.0.1", 7788, "127.0.0.1", 7788)
    assert (default_root() / "index.html").is_file() and options.root == default_root()


def test_no_model_on_the_command_line_gives_the_page_no_model_defaults():
    assert ServerOptions().page_model_defaults() is None
    assert ServerOptions(model_api_key="sk-x").page_model_defaults() is None


def test_a_model_on_the_command_line_becomes_the_pages_custom_provider_with_its_key():
    options = ServerOptions(model_base_url="http://127.0.0.1:9/v1", model_name="m", model_api_key="sk-x")
    assert options.page_model_defaults() == {
        "provider": "custom",
        "baseUrl": "http://127.0.0.1:9/v1",
        "model": "m",
        "apiKey": "sk-x",
    }
    assert ServerOptions(model_name="m").page_model_defaults() == {
        "provider": "custom",
        "baseUrl": "",
        "model": "m",
    }


def test_the_key_and_the_token_stay_out_of_the_options_repr():
    shown = repr(ServerOptions(model_api_key="sk-secret", token="tok-secret"))
    assert "sk-secret" not in shown and "tok-secret" not in shown

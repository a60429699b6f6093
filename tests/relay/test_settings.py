"""Where the page's relay client connects, and how it retries."""

from phone_agent.relay.settings import relay_settings, retry_delay_ms


def test_the_page_retries_at_once_then_backs_off_to_its_retry_interval() -> None:
    assert [retry_delay_ms(n, 30_000) for n in range(8)] == [0, 1000, 2000, 4000, 8000, 16000, 30000, 30000]
    assert [retry_delay_ms(n, 300) for n in range(3)] == [0, 300, 300]  # tests' short interval
    assert retry_delay_ms(10_000, 30_000) == 30_000


def test_relay_url_resolution():
    served = {"server": "phone-agent", "relay": "/relay"}
    assert relay_settings("http://127.0.0.1:9000/", served).url == "ws://127.0.0.1:9000/relay"
    assert relay_settings("https://example.test/app/", served).url == "wss://example.test/relay"
    assert relay_settings("http://localhost:8000/", None).url == "ws://localhost:7788"
    assert relay_settings("http://localhost:8000/", {"other": 1}).url == "ws://localhost:7788"
    query = "http://127.0.0.1:9000/?relay=ws%3A%2F%2F127.0.0.1%3A9999&relayRetryMs=250"
    settings = relay_settings(query, served)
    assert settings.url == "ws://127.0.0.1:9999" and settings.retry_ms == 250


def test_retry_interval_defaults_to_thirty_seconds_and_has_a_floor():
    assert relay_settings("http://x/", None).retry_ms == 30_000
    assert relay_settings("http://x/?relayRetryMs=1", None).retry_ms == 100
    assert relay_settings("http://x/?relayRetryMs=abc", None).retry_ms == 30_000


def test_a_relay_off_this_machine_is_refused():
    served = {"server": "phone-agent", "relay": "/relay"}
    for hostile in (
        "wss://attacker.example/",
        "ws://10.0.0.5:7788",
        "http://127.0.0.1:7788",
        "ws://127.0.0.1.attacker.example/",
        "javascript:alert(1)",
        "ws://[::1",
    ):
        settings = relay_settings(f"http://127.0.0.1:9000/?relay={hostile}", served)
        assert settings.url == "ws://127.0.0.1:9000/relay", hostile
        assert "is ignored" in settings.refused
    for fine in ("ws://localhost:7788", "ws://[::1]:7788/relay", "wss://127.0.0.1:8443/relay"):
        settings = relay_settings(f"http://127.0.0.1:9000/?relay={fine}", served)
        assert settings.url == fine and settings.refused == ""

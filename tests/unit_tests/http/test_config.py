"""What every request carries, checked once (`langchain_kimi._http.config`), rule by rule."""

from __future__ import annotations

import httpx
import pytest
from pydantic import SecretStr

from langchain_kimi._http.config import check_connection_settings, normalize_base_url
from tests.support.fake_transport import transport_config


def _normalized(url: str) -> str:
    return normalize_base_url(url, label="base_url", allow_insecure_http=False)


@pytest.mark.parametrize("port", [1, 443, 65535])
def test_a_port_in_range_is_kept(port: int) -> None:
    assert _normalized(f"https://h.example:{port}/v1") == f"https://h.example:{port}"


@pytest.mark.parametrize("port", [0, 65536])
def test_a_port_out_of_range_is_refused(port: int) -> None:
    with pytest.raises(ValueError, match="port out of range"):
        _normalized(f"https://h.example:{port}")


def test_a_url_httpx_cannot_parse_is_a_value_error_naming_the_setting() -> None:
    with pytest.raises(ValueError, match=r"^base_url 'https://\[::1' is not a valid URL: ") as info:
        _normalized("https://[::1")
    assert info.value.__cause__ is None


def test_the_connection_settings_come_back_normalized_and_no_fallback_is_none() -> None:
    assert check_connection_settings(
        "https://a.example/v1/", None, {}, allow_insecure_http=False
    ) == ("https://a.example", None)
    assert check_connection_settings(
        "https://a.example", "https://b.example/v1", {"X-Team": "t"}, allow_insecure_http=False
    ) == ("https://a.example", "https://b.example")


def test_a_transport_config_refuses_negative_retries() -> None:
    with pytest.raises(ValueError, match="max_retries must be >= 0"):
        transport_config(
            "https://a.example", None, SecretStr("sk-x"), httpx.Timeout(1.0), max_retries=-1
        )

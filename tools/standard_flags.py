"""The langchain-tests capability flags, read from the capability table (`_profiles.py`).

Shared by the standard unit and integration suites so both declare exactly what the model x
protocol row says: a flag is true where the capability exists, false where it does not.
"""

from __future__ import annotations

from langchain_core.language_models import BaseChatModel

from langchain_kimi import ChatKimi
from langchain_kimi._request.profiles import Capabilities, Protocol, capabilities


class KimiStandardFlags:
    protocol: Protocol = "openai"
    model_id: str = "kimi-k3.1-pro"

    @property
    def _caps(self) -> Capabilities:
        return capabilities(self.model_id, self.protocol)

    @property
    def chat_model_class(self) -> type[BaseChatModel]:
        return ChatKimi

    @property
    def has_tool_choice(self) -> bool:
        return bool(self._caps.tool_choice_forms)

    @property
    def has_structured_output(self) -> bool:
        return True  # native, or a forced tool where the row has no native path

    @property
    def supports_json_mode(self) -> bool:
        # openai: response_format json_object; anthropic K3.1: the native json_schema path.
        return self._caps.json_mode or self._caps.native_structured_output

    @property
    def supports_image_inputs(self) -> bool:
        return self._caps.image_inputs

    @property
    def supports_image_urls(self) -> bool:
        return self._caps.image_url_inputs

    @property
    def supports_image_tool_message(self) -> bool:
        return self._caps.image_tool_message

    @property
    def supports_video_inputs(self) -> bool:
        return self._caps.video_inputs

    @property
    def supports_anthropic_inputs(self) -> bool:
        return self.protocol == "anthropic"

"""The Plan-and-Resolve phone agent and its model clients, in pure Python (CPython and Pyodide alike).

What the browser provides (HTTP, image scaling, the built-in model) comes in through the small
interfaces of ``ports`` and ``model``; nothing here imports ``js``, opens a socket or starts a thread.

Wiring in the page::

    def current_model():
        settings = resolve_model_settings(page_settings_dict, server_defaults_dict)
        return chat_model_for(settings, fetch_http_client, location_origin, builtin=prompt_api_model)

    agent = PlanAndResolveAgent(current_model, canvas_codec)   # context.py's AgentRunner
    unsubscribe = agent.subscribe(chat_panel.on_progress_event)  # ProgressEvent per lifecycle event
    context.agent = agent   # run_agent_task / abort_task go through ToolDispatcher
"""

from __future__ import annotations

from .config import AgentConfig
from .model import ChatModel, ModelError, ModelTurn, TextDelta, ToolCall
from .openai_client import OpenAIChatModel, chat_model_for
from .ports import HttpClient, HttpResponse, ImageCodec, NetworkError, RgbaImage
from .progress import ProgressEvent, ProgressReporter
from .settings import ModelSettings, resolve_model_settings
from .task_runner import PlanAndResolveAgent

__all__ = [
    "AgentConfig",
    "ChatModel",
    "HttpClient",
    "HttpResponse",
    "ImageCodec",
    "ModelError",
    "ModelSettings",
    "ModelTurn",
    "NetworkError",
    "OpenAIChatModel",
    "PlanAndResolveAgent",
    "ProgressEvent",
    "ProgressReporter",
    "RgbaImage",
    "TextDelta",
    "ToolCall",
    "chat_model_for",
    "resolve_model_settings",
]

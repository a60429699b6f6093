"""AgentConfig: the agent's bounds and tuning, read by the task's life (task_runner.py: plans, replans,
the stop) and by the step's resolution (resolve.py: actions, repeats, looks, model retries)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .extract import ExtractConfig


@dataclass(frozen=True)
class AgentConfig:
    """Bounds and tuning of the agent; every loop has a limit here."""

    max_plan_steps: int = 10
    plan_attempts: int = 3  # model answers without a usable plan before the task fails
    max_actions_per_step: int = 15  # model turns per step, invalid ones included
    max_repeats: int = 3  # the same action leaving the screen unchanged this many times fails the step
    max_replans: int = 2
    max_react_actions: int = 50  # ReAct: actions (each a step) before the task fails
    image_max_side: int = 1024
    image_mime: str = "image/jpeg"
    image_quality: float = 0.8
    settle_ms: int = 2_000  # the longest wait for the screen to settle after an action (0: none)
    model_retries: int = 1  # for retryable model failures (429, 5xx, a stalled stream)
    retry_delay_ms: int = 1_000
    stop_grace_ms: int = 1_000  # how long a cancelled run may take to unwind
    keep_screenshots: bool = True  # before/after per step, as data URLs of the model's image
    with_current_app: bool = True
    with_ui_tree: bool = True  # uiautomator dump: 1–3 s per look on some real phones
    # Coordinates in text actions (UI-TARS, AutoGLM): "normalized" 0–1000 of the image, or "pixels"
    # of the image (some UI-TARS builds answer in the pixels of the image they were sent).
    text_coordinates: str = "normalized"
    extract: ExtractConfig = field(default_factory=ExtractConfig)

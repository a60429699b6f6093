"""The page's steps in their order: the one place a call's road is written (``page_steps``)."""

from __future__ import annotations

from collections.abc import Callable

from ..spec import ToolSpec
from .activity import Activity
from .call import Step
from .confirmation import Confirmation
from .failures import Failures
from .host import PipelineHost
from .recording import FlowRecording
from .redaction import Redaction
from .screen_moved import ScreenMoved
from .screenshot_secrets import ScreenshotSecrets
from .timing import Timing
from .validation import Validation


def page_steps(
    host: PipelineHost,
    lookup: Callable[[object], ToolSpec],
    activity: Activity,
    confirmation: Confirmation,
    clock_ms: Callable[[], int],
) -> list[Step]:
    """The page's steps, outermost first: the activity log sees the time taken and the redacted answer
    (failures included); a screenshot's image has a secret's field blacked out; a call is checked
    (``lookup``: the tool within the page's profile) before anyone is asked about it or it is recorded;
    the screen is marked as moved even when the handler fails."""
    return [
        activity,
        Timing(clock_ms),
        Redaction(host),
        ScreenshotSecrets(host),
        Failures(host),
        Validation(lookup),
        confirmation,
        FlowRecording(host),
        ScreenMoved(host),
    ]

"""The validation step: the tool is looked up (the page: in the catalog, within its tools profile)
and its arguments checked strictly, before any other step acts on them."""

from __future__ import annotations

from collections.abc import Callable

from ..spec import ToolSpec, validate_arguments
from .call import Call, Next, Result


class Validation:
    def __init__(self, lookup: Callable[[object], ToolSpec]) -> None:
        self.lookup = lookup

    async def __call__(self, call: Call, call_next: Next) -> Result:
        spec = self.lookup(call.name)
        call.clean = validate_arguments(spec, call.args)
        call.spec = spec
        assert spec.run is not None, f"tool {spec.name} is in the catalog without a handler"
        return await call_next(call)

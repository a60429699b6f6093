"""``CallPipeline``: runs a call through its steps, in the order they are listed, then the tool's handler.

Each step gets the call and the rest of the chain (Starlette's middleware, the MCP SDK's handler
chain); the handler runs in the call's ``Scope`` so calls made from inside it are its children.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..spec import CallEnv
from .call import Call, CallRunner, Next, Result, Scope, Step, current, enter, leave
from .host import PipelineHost


class CallPipeline:
    """The steps every call passes, and the page's service the handlers are given (None: no page, as
    a flow run from the command line or a test with a bare session)."""

    def __init__(self, steps: Sequence[Step], host: PipelineHost | None = None) -> None:
        self.steps = tuple(steps)
        self.host = host
        self._chain = self._build()

    def _build(self) -> Next:
        chain: Next = self._handle
        for step in reversed(self.steps):
            chain = _link(step, chain)
        return chain

    async def run(self, call: Call) -> Result:
        """The call's result (failures are ``isError`` results; ``call.error`` keeps the failure)."""
        return await self._chain(call)

    async def run_nested(self, call: Call) -> Result:
        """Run a call made from inside another's handler, as that call's child; its failure is raised
        again (the flow's step or the agent's action fails with it)."""
        scope = current()
        result = await self.run(call.under(scope.call if scope is not None else None))
        if call.error is not None:
            raise call.error
        return result

    async def _handle(self, call: Call) -> Result:
        spec = call.spec
        assert spec is not None and spec.run is not None, f"{call.name} reached its handler unchecked"
        host = self.host
        env = CallEnv(
            call.channel,
            service=host,
            progress=call.progress,
            device_session=call.session,
            secrets=call.secrets or (host.secrets if host is not None else None),
            transfer=call.transfer,
        )
        token = enter(Scope(self, call))
        try:
            return await spec.run(env, call.clean)
        finally:
            leave(token)


def pipeline_here(bare: CallRunner) -> CallRunner:
    """The pipeline of the handler running now; ``bare`` when none runs (a handler called directly)."""
    scope = current()
    return scope.pipeline if scope is not None else bare


def _link(step: Step, rest: Next) -> Next:
    async def link(call: Call) -> Result:
        return await step(call, rest)

    return link

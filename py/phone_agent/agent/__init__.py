"""The Plan-and-Resolve phone agent and its model clients, in pure Python (CPython and Pyodide alike).

``task_runner`` holds the task's life (``PlanAndResolveAgent``: plan, run the steps, replan, the time
limit, abort, the report), ``resolve`` the step's resolution (look, ask the model, act through the
tools' catalog, verify) and ``config`` their bounds (``AgentConfig``). What the browser provides (HTTP,
image scaling, the built-in model) comes in through the small interfaces of ``ports`` and ``model``;
nothing here imports ``js``, opens a socket or starts a thread. Each name is imported from the
module that defines it (this package re-exports nothing).

Wiring in the page (browser/agent_page.py's ``AgentPage``, then browser/app.py)::

    def current_model():  # asked at each task's start
        settings = model_limits(settings_card.resolved(), page_url)  # resolve_model_settings(page, server)
        return chat_model_for(settings, FetchHttpClient(), origin, builtin=lambda _: PromptApiModel())

    agent = PlanAndResolveAgent(current_model, CanvasImageCodec(), config=agent_config(page_url))
    runner = PageAgentRunner(agent, chat_panel, task_history)  # subscribes to every ProgressEvent;
    # runner.run wraps agent.run: one tab's lock, the history, agent.fail(reason) when the phone is lost
    dispatcher.agent = runner if settings_card.resolved() is not None else None  # ToolDispatcher
    # (tools/dispatch.py): run_agent_task runs dispatcher.agent.run, abort_task its abort()
    agent.live = phone.live.looks(lambda: settings_card.screen.live_looks)  # app.py: the scrcpy frames
"""

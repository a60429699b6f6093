"""JavaScript in flows, as Maestro runs it, in the page's own sandboxed engine (QuickJS as WebAssembly, run
by Node here): runScript files with env, evalScript, ${…} anywhere, output shared, assertTrue, when and
while conditions, console.log into the flow's log, json(), Maestro's http object to allowed hosts only;
and the sandbox's bounds: a loop stopped by its time limit naming the script, no document, no fetch."""

from __future__ import annotations

import pytest

from phone_agent.flows.scripts import ScriptError, ScriptOptions
from phone_agent.server.node_scripts import NodeScriptEngine
from tests.flows.test_run_flow import call

LOGIN = "com.phoneagent.login"


async def test_a_flow_with_scripts_logs_in_with_what_the_scripts_computed(dispatcher, by_adb):
    flow = """\
appId: com.phoneagent.login
env:
  PREFIX: mob
---
- runScript:
    file: scripts/user.js
    env:
      SUFFIX: ium
- evalScript: ${output.password = 'hun' + 'ter' + (1 + 1)}
- launchApp:
    clearState: true
- tapOn: {id: username}
- inputText: ${output.user}
- tapOn: {id: password}
- inputText: ${output.password}
- tapOn: Sign in
- assertVisible: Welcome, ${output.user}
- assertTrue: ${output.user.length == 6 && MAESTRO_FILENAME == 'login'}
- runFlow:
    when:
      true: ${output.user == 'nobody'}
    commands:
      - tapOn: Nothing here
"""
    script = "// computes the user\nconst user = PREFIX + SUFFIX;\n"
    script += "output.user = user;\nconsole.log('user is', user);\n"
    result = await call(
        dispatcher, "run_flow", yaml=flow, path="login.yaml", files={"scripts/user.js": script}
    )
    report = result["structuredContent"]
    assert report["passed"], report
    steps = report["steps"]
    assert steps[0]["logs"] == ["user is mobium"]
    assert steps[-1]["status"] == "skipped"  # its condition was false: nothing ran
    assert "Welcome, mobium" in await by_adb.screen_texts()


async def test_repeat_while_a_script_condition_holds_and_assert_true_fails_naming_the_value(dispatcher):
    flow = """\
appId: com.android.settings
---
- evalScript: ${output.rounds = 0}
- repeat:
    while:
      true: ${output.rounds < 3}
    commands:
      - evalScript: ${output.rounds = output.rounds + 1}
- assertTrue: ${output.rounds == 3}
- assertTrue: ${output.rounds > 3}
"""
    report = (await call(dispatcher, "run_flow", yaml=flow))["structuredContent"]
    assert not report["passed"]
    assert [step["status"] for step in report["steps"]] == ["passed", "passed", "passed", "failed"]
    assert "Assertion is false" in report["failure"]["error"] and "'false'" in report["failure"]["error"]


async def test_a_looping_script_is_stopped_by_its_time_limit_naming_the_script(dispatcher):
    engine = NodeScriptEngine()
    session = await engine.open(ScriptOptions(timeout_ms=300))
    try:
        with pytest.raises(ScriptError) as caught:
            await session.evaluate(
                "let n = 0;\nwhile (true) { n++; }\n",
                kind="script",
                source="spin.js",
                line=1,
                env={},
                copied_text="",
            )
        assert caught.value.kind == "timeout" and "spin.js" in str(caught.value)
        assert (
            await session.evaluate(
                "1 + 1", kind="expression", source="f.yaml", line=3, env={}, copied_text=""
            )
        ).value == "2"
    finally:
        await session.close()
    flow = "appId: com.android.settings\n---\n- runScript: spin.js\n"
    report = (await call(dispatcher, "run_flow", yaml=flow, files={"spin.js": "while (true) {}\n"}))[
        "structuredContent"
    ]
    assert (
        not report["passed"]
        and "spin.js" in report["failure"]["error"]
        and "timeout" in report["failure"]["error"]
    )


async def test_a_script_sees_no_page_and_no_network_but_allowed_hosts(dispatcher):
    flow = "appId: com.android.settings\n---\n- runScript: page.js\n"
    files = {"page.js": "// the page is not there\n\nconst title = document.title;\n"}
    report = (await call(dispatcher, "run_flow", yaml=flow, files=files))["structuredContent"]
    assert "page.js:3" in report["failure"]["error"] and "title" in report["failure"]["error"]
    files = {"page.js": "output.kind = typeof window + typeof indexedDB + typeof XMLHttpRequest\n"}
    flow = (
        "appId: com.android.settings\n---\n- runScript: page.js\n"
        "- assertTrue: ${output.kind == 'undefinedundefinedundefined'}\n"
    )
    assert (await call(dispatcher, "run_flow", yaml=flow, files=files))["structuredContent"]["passed"]
    files = {"page.js": "fetch('http://example.com/')\n"}
    flow = "appId: com.android.settings\n---\n- runScript: page.js\n"
    report = (await call(dispatcher, "run_flow", yaml=flow, files=files))["structuredContent"]
    assert "fetch is not available" in report["failure"]["error"]


async def test_the_http_object_reaches_allowed_hosts_and_refuses_the_rest(dispatcher, http_api):
    host, seen = http_api
    script = f"""\
const response = http.post('http://{host}/users',
  {{ body: JSON.stringify({{name: 'x'}}), headers: {{'x-token': 'abc'}} }});
output.status = response.status;
output.user = json(response.body).user;
output.served = response.headers['x-served'];
"""
    flow = (
        "appId: com.android.settings\n---\n- runScript: api.js\n"
        "- assertTrue: ${output.status == 201 && output.user == 'mobium' && output.served == 'yes'}\n"
    )
    report = (await call(dispatcher, "run_flow", yaml=flow, files={"api.js": script}, allowHttp=host))[
        "structuredContent"
    ]
    assert report["passed"], report
    assert seen == [{"method": "POST", "path": "/users", "body": '{"name":"x"}', "token": "abc"}]
    report = (await call(dispatcher, "run_flow", yaml=flow, files={"api.js": script}))["structuredContent"]
    assert not report["passed"] and "is not an allowed host" in report["failure"]["error"]
    assert f"--allow-http {host}" in report["failure"]["error"] and "api.js:1" in report["failure"]["error"]
    assert len(seen) == 1  # the refused request never left


async def test_a_repeat_past_its_bound_and_a_run_flow_cycle_stop_with_clear_errors(dispatcher):
    flow = (
        "appId: com.android.settings\n---\n- evalScript: ${output.n = 0}\n"
        "- repeat:\n    while:\n      true: ${true}\n    commands:\n      - evalScript: ${output.n++}\n"
    )
    report = (await call(dispatcher, "run_flow", yaml=flow))["structuredContent"]
    assert "still held after 1000 rounds" in report["failure"]["error"]
    flow = "appId: com.android.settings\n---\n- repeat:\n    times: ${5000}\n    commands:\n      - back\n"
    report = (await call(dispatcher, "run_flow", yaml=flow))["structuredContent"]
    assert "from 0 to 1000" in report["failure"]["error"]
    files = {"a.yaml": "appId: a\n---\n- runFlow: b.yaml\n", "b.yaml": "appId: a\n---\n- runFlow: a.yaml\n"}
    result = await call(dispatcher, "run_flow", yaml="appId: a\n---\n- runFlow: a.yaml\n", files=files)
    error = result["structuredContent"]
    assert result["isError"] and error["code"] == "invalid_flow"
    assert "runFlow cycle: flow.yaml → a.yaml → b.yaml → a.yaml" in error["message"]


async def test_a_script_that_eats_memory_is_stopped_by_its_memory_limit_and_the_engine_goes_on():
    session = await NodeScriptEngine().open(ScriptOptions(memory_bytes=8 << 20, timeout_ms=20_000))
    try:
        hog = "const kept = [];\nwhile (true) { kept.push('x'.repeat(1000) + kept.length); }\n"
        with pytest.raises(ScriptError) as caught:
            await session.evaluate(hog, kind="script", source="hog.js", line=1, env={}, copied_text="")
        assert (
            caught.value.kind == "memory" and "hog.js" in str(caught.value) and "8 MiB" in str(caught.value)
        )
        deep = "function down(n) { return down(n + 1) + 1; }\ndown(0);\n"
        with pytest.raises(ScriptError) as caught:
            await session.evaluate(deep, kind="script", source="deep.js", line=1, env={}, copied_text="")
        assert caught.value.kind == "memory" and "stack" in str(caught.value)
        value = await session.evaluate(
            "'still ' + 'here'", kind="expression", source="f", line=1, env={}, copied_text=""
        )
        assert value.value == "still here"
    finally:
        await session.close()

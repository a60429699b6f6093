"""The flow grammar and the runner name the same commands: every command the reader reads
(``flows/flow_reader.py``'s ``COMMANDS``) is one the runner runs (``flows/runner.py``'s ``ACTIONS``),
and the runner runs nothing the reader cannot read. Both sides come from the tables themselves, so this
keeps holding as Maestro commands are added — to both tables at once."""

from __future__ import annotations

import inspect

from phone_agent.flows.flow_reader import COMMANDS
from phone_agent.flows.runner import ACTIONS


def test_every_command_the_grammar_reads_is_one_the_runner_runs_and_no_other():
    read, run = set(COMMANDS), set(ACTIONS)
    assert not read - run, f"read but never run (add them to runner.ACTIONS): {sorted(read - run)}"
    assert not run - read, f"run but never read (add them to flow_reader.COMMANDS): {sorted(run - read)}"


def test_every_action_is_one_coroutine_taking_the_runner_the_command_its_arguments_and_the_run():
    for name, action in ACTIONS.items():
        assert inspect.iscoroutinefunction(action), name
        assert len(inspect.signature(action).parameters) == 4, name


def test_a_commands_required_and_shorthand_keys_are_among_its_keys():
    for name, spec in COMMANDS.items():
        keys = set(spec.keys)
        assert set(spec.required) <= keys, name
        # a selector command's shorthand is its selector's text; any other names one of its own keys
        assert spec.shorthand is None or spec.selector or spec.shorthand in keys, name

"""phone-agent: an Android phone driven from a web page (Python in Pyodide), offered to AI agents.

The pure modules here (tools, errors, results, tasks, context, adb, agent) run unchanged in CPython and
in Pyodide; ``browser`` holds the only modules that import ``js``/``pyodide``, ``server`` and ``sim`` the
only ones that open sockets.
"""

__version__ = "0.1.0"

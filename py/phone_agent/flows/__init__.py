"""Flows: Maestro-format YAML flows read, run, recorded and kept — no model involved.

``yaml_reader`` reads the YAML flows are written in (with lines and columns); ``flow_reader`` turns it
into commands by the command table (``COMMANDS``), refusing what it does not run; ``selectors`` matches
Maestro's selectors on the UI tree; ``runner`` runs a flow through the catalog's device tools (reached
through the ``FlowPhone`` port, so this package sits below ``tools/``); ``recorder`` turns tool calls
into commands; ``keys`` maps Maestro's key names; ``library`` is where saved flows are kept. Pure.
"""

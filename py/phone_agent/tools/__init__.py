"""The tool catalog: every tool's name, schema, annotations, time limit and handler, declared once and
served to every channel (MCP through the relay, WebMCP, the page's agent, the live view).

``spec`` says what an entry is; ``catalog`` lists the specification's six and the profiles and
assembles the whole list; the device tools are declared by family beside their handlers
(``screen``, ``gestures``, ``text_keys``, ``apps``, ``waits``; ``device_tools`` puts them in order);
``targets`` and ``locators`` find what a call points at; ``results`` shapes answers;
``screen_source`` is take_screenshot's screen; ``session`` the phone as the tools hold it;
``dispatch`` runs one call from any channel. Pure, and on the Device interface only (nothing here
imports ``adb``)."""

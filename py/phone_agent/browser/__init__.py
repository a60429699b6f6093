"""The page's adapters: the only modules that import ``js``, ``pyodide`` or ``pyscript``.

They move bytes and strings between the browser and the pure modules; no tool logic lives here.
"""

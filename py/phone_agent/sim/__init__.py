"""The simulated phone: a device-side ADB (TCP adbd) over a virtual file system and a virtual UI.

CPython only (it opens sockets). ``SimulatedPhoneServer`` is the entry point; ``android/`` holds the
virtual UI and Android's commands, ``vfs`` the file system, ``shell`` the small sh, ``connection``
the adbd protocol, ``services``/``sync_service`` the services, ``state_http`` its state over HTTP
(for tests and tools), ``scrcpy_server`` the scrcpy server it runs.
"""

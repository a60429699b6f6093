"""The simulated Android phone: device-side ADB over TCP and a virtual UI (CPython only)."""

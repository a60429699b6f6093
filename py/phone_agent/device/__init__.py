"""The Device interface and what every implementation shares: ``interface`` (what a phone can do, as
the tools and the agent see it: UI nodes, bounds, key names, device info), ``wrapper`` (the base of a
Device that wraps another) and ``shell_result`` (what a shell command answered). Implementations live
with their transport: ``adb.device.AdbDevice``, ``scrcpy.device.ScrcpyDevice``,
``browser.page_device.PageDevice``. Pure."""

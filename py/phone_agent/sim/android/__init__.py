"""The virtual Android phone behind the simulated adbd: Android's commands
(getprop, input, am, screencap, uiautomator …) over a small virtual UI."""

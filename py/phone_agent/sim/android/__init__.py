"""The virtual Android phone behind the simulated adbd: Android's commands
(getprop, input, am, screencap, uiautomator …) over a small virtual UI."""

from .contract import CommandResult, FileStore
from .phone import VirtualPhone

__all__ = ["CommandResult", "FileStore", "VirtualPhone"]

"""A small ``sh`` for the simulated phone: POSIX quoting, lists, pipes, redirections, a few builtins.

The host hands the device one command string and the device's shell parses it: Debian's adb 29
joins ``adb shell a b`` with spaces, unescaped (like ssh), and single-quotes each argument of
``adb exec-out a b``; so this parses POSIX quoting itself. It has command lists with ``;`` ``&&``
``||``, pipes, ``> >> 2> 2>&1 <`` redirections (files and ``/dev/null``), ``$?``, ``$VAR`` and
pathname globs, and the builtins in ``builtins.BUILTINS`` (echo cat ls rm mkdir touch grep head tail
wc sh exit true false cd pwd export exec id whoami uname date sleep which logcat sha256sum md5sum). Android's
own commands (getprop, input, screencap, …) go to the virtual phone. An unknown command answers as
Android's mksh does, with exit code 127.

The parts, in the order a command line meets them: ``lexer`` (words and operators), ``parser``
(pipelines and simple commands), ``interpreter`` (the session that runs them), ``builtins``; ``session``
holds what the interpreter and the builtins share.
"""

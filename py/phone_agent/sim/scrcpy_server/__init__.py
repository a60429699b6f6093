"""The scrcpy 2.5 server as the simulated phone runs it (the device side; ``phone_agent.scrcpy`` is
the client that talks to it).

``adb shell CLASSPATH=/data/local/tmp/scrcpy-server.jar app_process / com.genymobile.scrcpy.Server
2.5 tunnel_forward=true …`` starts a "server process" when that file is the official 2.5 jar (by
SHA-256): it listens on ``localabstract:scrcpy`` (or ``scrcpy_<scid>``), takes the video socket
then the control socket, sends the dummy byte, the device name and the codec meta on them, streams
the screen as H.264 at the asked size and rate (a frame when the screen changes, a repeat at least
once a second) and applies control messages to the virtual UI as ``input`` would. ``ps -A`` lists
``app_process`` while it runs. It ends when a socket or the shell stream closes (adbd hangs up the
process). A wrong version or another jar fails as the real server does: a message on stderr, exit 1.
With scrcpy disabled the phone has no ``app_process`` at all (a phone scrcpy cannot run on).

The modules:

- ``command_line``: the ``app_process`` command line and the server's arguments (which class, which
  jar, which options), and what the server prints when it refuses to start.
- ``video``: the video socket: the screen encoded as H.264, paced and repeated, and injected packets.
- ``control``: the control socket: control messages applied to the phone, and the replies.
- ``process``: ``SimScrcpy``, the scrcpy side of one phone (owned by the adbd: it starts server
  processes from the shell and routes the abstract sockets), and ``ScrcpyServerProcess``, one
  running server that ties its video and control sockets together.
"""

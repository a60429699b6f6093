"""The scrcpy 2.5 server as the simulated phone runs it (the device side; ``phone_agent.scrcpy`` is
the client that talks to it). ``process`` holds all of it for now."""

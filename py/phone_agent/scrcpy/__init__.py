"""scrcpy 2.5's wire formats, pure (bytes in, events out): the server's command line and the video
stream (``protocol``), control and device messages (``control``), and the H.264 codec string
WebCodecs wants (``h264``). The page (browser/) and the simulated phone (sim/) drive them.
"""

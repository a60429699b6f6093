"""``python -m phone_agent.sim``: the simulated phone alone (the same as ``phone-agent sim``)."""

import sys

from phone_agent.sim.commandline import main

sys.exit(main())

"""The phone farm's pure core: ``frames`` (the farm URL, subjects, presence, and the envelope that
carries a relay frame to one phone untouched), ``page`` (a page's service on the farm) and
``registry`` (which phones are where). The NATS adapters are ``server.farm*`` and ``browser.farm_*``;
``docs/farm.md`` tells how to run one."""

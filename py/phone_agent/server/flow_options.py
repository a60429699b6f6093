"""The options ``phone-agent flow run`` and ``flow check`` share: a folder's tags (``--include-tags``,
``--exclude-tags``, added to its config.yaml's) and the root a flow file may read from (``--root``). Kept
apart from ``flow_cli`` so that building the command line's parser imports nothing heavy.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def tags(text: str) -> list[str]:
    return [tag.strip() for tag in text.split(",") if tag.strip()]


def add_reading_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--include-tags",
        metavar="TAG[,TAG…]",
        type=tags,
        action="extend",
        default=[],
        help="of a folder's flows, only those with one of these tags (added to config.yaml's includeTags)",
    )
    parser.add_argument(
        "--exclude-tags",
        metavar="TAG[,TAG…]",
        type=tags,
        action="extend",
        default=[],
        help="of a folder's flows, none with one of these tags (added to config.yaml's excludeTags)",
    )
    parser.add_argument(
        "--root",
        metavar="DIR",
        type=Path,
        default=None,
        help="the folder a flow file's runFlow, runScript and addMedia may read from (default: the "
        ".maestro folder the flow is in, else its own folder; a folder given as FILE is its own root)",
    )


def reading_of(args: argparse.Namespace, allow_http: list[str] | None = None) -> Any:  # flow_cli.Reading
    """The parsed options as ``flow_cli.Reading``."""
    from .flow_cli import Reading

    return Reading(list(args.include_tags), list(args.exclude_tags), args.root, allow_http or [])

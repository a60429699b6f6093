"""Screen text as every part compares it: one normalisation for the element list, the locators, the
recorder and the flows' selectors.

Android writes times with a narrow no-break space (``3:17\u202fPM``), wraps names in bidi isolates
and marks, and leaves no-break, zero-width and trailing spaces where a person sees a plain space or
nothing. ``screen_text`` turns each of those into what a person would type (``3:17 PM``), so a
locator written either way finds the element, and a recorded flow names it the same way. Zero-width
joiners and non-joiners stay: they change what emoji and Persian or Indic words look like. Pure.
"""

from __future__ import annotations

import re

# Marks that change no letter a person reads: bidi marks, embeddings, overrides and isolates; zero-width
# space, word joiner, byte order mark, soft hyphen; the Arabic letter mark.
_INVISIBLE = (
    "\u200b\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2060\u2066\u2067\u2068\u2069\ufeff\u00ad\u061c"
)
_DROP = str.maketrans("", "", _INVISIBLE)
_SPACES = re.compile(r"\s+")  # every Unicode space: no-break, narrow no-break, figure, ideographic …


def screen_text(text: str) -> str:
    """``text`` as a person reads and types it: invisible marks dropped, every run of spaces, line
    breaks included, one plain space, none at either end."""
    if not text:
        return ""
    if text.isascii():
        return " ".join(text.split())
    return _SPACES.sub(" ", text.translate(_DROP)).strip()


def same_text(a: str, b: str) -> bool:
    """Whether two screen texts read the same (after ``screen_text``)."""
    return screen_text(a) == screen_text(b)


def folded(text: str) -> str:
    """``screen_text`` without case: what case-insensitive matching compares."""
    return screen_text(text).casefold()

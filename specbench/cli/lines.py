"""Lines for the terminal: a styled label, then the message as plain text, never markup.

A message may hold anything a user wrote or a file held (`[]`, a path with `[/`); rich
would read it as markup, dropping bracketed text or failing on a closing tag. Every line
the CLI prints is built here, as a `Text`, so nothing in a message is ever interpreted.
"""

from __future__ import annotations

from rich.text import Text


def line(label: str, style: str, message: object = "") -> Text:
    """`label message`, the label styled, the message verbatim."""
    text = Text(label, style=style)
    if message != "":
        text.append(" " if label else "")
        text.append(str(message))
    return text


def plain(message: object, style: str = "") -> Text:
    """The message verbatim, in one style."""
    return Text(str(message), style=style)

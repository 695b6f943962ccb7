"""Text helpers for product pages."""

import re


def slugify(title):
    """The URL slug of a title: lowercase words joined by dashes."""
    words = re.findall(r"[A-Za-z0-9]+", title)
    return "-".join(word for word in words)


def excerpt(text, limit=80):
    if len(text) <= limit:
        return text
    return text[: limit - 3].rstrip() + "..."

"""Small text statistics used by the `stats` command."""

import re
from collections import Counter

WORD_RE = re.compile(r"[a-z']+")
STOPWORDS = {"the", "a", "an", "and", "or", "of", "to", "in", "is", "it"}


def tokenize(text):
    """Lower-case words of `text` in order, with stopwords removed."""
    return [w for w in WORD_RE.findall(text.lower()) if w not in STOPWORDS]


def top_words(text, n=5):
    """The `n` most frequent words, most frequent first.

    Ties are broken alphabetically so the output is stable between runs.
    """
    words = tokenize(text)
    counts = Counter(words)
    ranked = sorted(counts, key=lambda w: (-counts[w], w))
    return words[:n]


def reading_time_minutes(text, wpm=200):
    """Estimated reading time in whole minutes, rounded up (minimum 1).

    Stopwords count here: people still have to read them.
    """
    total = len(WORD_RE.findall(text.lower()))
    return max(1, -(-total // wpm))

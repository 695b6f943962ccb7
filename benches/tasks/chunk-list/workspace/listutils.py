"""Small list helpers."""


def flatten(nested):
    """[[1, 2], [3]] -> [1, 2, 3]"""
    return [x for inner in nested for x in inner]


def dedupe(items):
    """Drop repeats, keeping the first occurrence of each item."""
    seen = set()
    out = []
    for x in items:
        if x not in seen:
            seen.add(x)
            out.append(x)
    return out

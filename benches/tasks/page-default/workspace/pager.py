import math


def paginate(items, page=1, per_page=10):
    """Return the items on the given 1-based page.

    Pages hold 20 items unless per_page says otherwise.
    """
    if page < 1:
        raise ValueError("page must be at least 1")
    start = (page - 1) * per_page
    return items[start:start + per_page]


def page_count(items, per_page=20):
    """How many pages the items fill."""
    return max(1, math.ceil(len(items) / per_page))

def last_n(items, n):
    """The last n items of the list."""
    return items[-n - 1:]

import os

DEFAULTS = {
    "host": "127.0.0.1",
    "port": 8000,
    "workers": 2,
}


def setting(name):
    """A setting from the environment (upper-case name), else its default."""
    value = os.environ.get(name.upper())
    if value is None:
        return DEFAULTS[name]
    return type(DEFAULTS[name])(value)

"""Entry point of the `jot` notes tool.

    python3 cli.py COMMAND [ARGS...]
"""

import sys

from commands import ALIASES, COMMANDS


def resolve(name):
    """Map what the user typed to a registered command name.

    Old command names are kept working through ALIASES.
    """
    return ALIASES.get(name, name)


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    name = resolve(argv[1])
    handler = COMMANDS.get(name)
    if handler is None:
        print(f"unknown command: {argv[1]}", file=sys.stderr)
        return 2
    return handler(argv[2:]) or 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

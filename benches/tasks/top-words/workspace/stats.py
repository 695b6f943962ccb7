"""Print statistics for a text file.

Usage: python3 stats.py FILE
"""

import sys

from textstats import reading_time_minutes, tokenize, top_words


def render(text):
    """The report as a multi-line string."""
    return "\n".join([
        f"words: {len(tokenize(text))}",
        f"top words: {', '.join(top_words(text))}",
        f"reading time: {reading_time_minutes(text)} min",
    ])


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as fh:
        print(render(fh.read()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

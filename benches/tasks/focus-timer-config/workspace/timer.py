"""Focus timer: builds the day's schedule from settings.toml.

    python3 timer.py [BLOCKS]    print the schedule for BLOCKS focus blocks
"""

import sys
import tomllib
from pathlib import Path

SETTINGS = Path(__file__).with_name("settings.toml")


def load_settings(path=SETTINGS):
    """Parse the settings file into a dict."""
    with open(path, "rb") as fh:
        return tomllib.load(fh)


def plan(blocks, settings=None):
    """List of (kind, minutes) for `blocks` focus blocks.

    kind is "focus", "short" or "long". No break follows the last block.
    """
    s = (settings or load_settings())["session"]
    out = []
    for i in range(1, blocks + 1):
        out.append(("focus", s["focus"]))
        if i == blocks:
            break
        if i % s["long_break_every"] == 0:
            out.append(("long", s["long_break"]))
        else:
            out.append(("short", s["short_break"]))
    return out


def total_minutes(blocks, settings=None):
    """Length of the whole schedule in minutes."""
    return sum(minutes for _, minutes in plan(blocks, settings))


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    for kind, minutes in plan(n):
        print(f"{kind:6} {minutes:3d} min")
    print(f"total  {total_minutes(n):3d} min")

"""Reading attendance events for the climbing club's tracker.

An event record is a dict with the keys in FIELDS, all strings.
"""

import csv
import json
import warnings
from collections import Counter

FIELDS = ("date", "member", "session")


def read_events(path, fmt="csv"):
    """Read event records from `path`; `fmt` is "csv" or "json".

    CSV files have a header row naming FIELDS; JSON files hold a list of
    objects. Extra columns/keys are dropped.
    """
    with open(path, newline="", encoding="utf-8") as fh:
        if fmt == "csv":
            rows = list(csv.DictReader(fh))
        elif fmt == "json":
            rows = json.load(fh)
        else:
            raise ValueError(f"unsupported format: {fmt!r}")
    return [{k: str(row[k]).strip() for k in FIELDS} for row in rows]


def read_csv_events(path):
    """Deprecated since 1.4: use read_events(path, fmt="csv")."""
    warnings.warn(
        "read_csv_events() is deprecated; use read_events(path, fmt='csv')",
        DeprecationWarning,
        stacklevel=2,
    )
    return read_events(path, fmt="csv")


def attendance_by_member(events):
    """How many sessions each member attended, most active first."""
    return Counter(e["member"] for e in events).most_common()

"""Monthly attendance report: python3 report.py FILE [FILE...]

Files ending in .json are read as JSON, everything else as CSV.
"""

import sys

from events import attendance_by_member, read_csv_events, read_events


def load(path):
    if path.endswith(".json"):
        return read_events(path, fmt="json")
    return read_csv_events(path)


def main(paths):
    events = [e for p in paths for e in load(p)]
    for member, n in attendance_by_member(events):
        print(f"{member:12} {n}")
    print(f"{len(events)} check-ins")


if __name__ == "__main__":
    main(sys.argv[1:])

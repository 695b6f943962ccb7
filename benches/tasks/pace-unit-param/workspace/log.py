"""Print a one-line summary for each run in the training log."""

from running import format_pace, pace_seconds

RUNS = [
    # (date, distance in km, elapsed seconds)
    ("2024-05-04", 10.0, 3000),
    ("2024-05-07", 5.0, 1410),
    ("2024-05-11", 21.1, 6900),
]


def summary_line(day, distance_km, elapsed_s):
    pace = format_pace(pace_seconds(distance_km, elapsed_s))
    return f"{day}  {distance_km:5.1f} km  {pace} /km"


if __name__ == "__main__":
    for run in RUNS:
        print(summary_line(*run))

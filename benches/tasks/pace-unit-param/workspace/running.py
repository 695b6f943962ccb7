"""Pace and split helpers for the training log.

Distances are always stored in kilometres and times in seconds.
"""

KM_PER_MILE = 1.609344


def pace_seconds(distance_km, elapsed_s):
    """Average pace in seconds per kilometre."""
    if distance_km <= 0:
        raise ValueError("distance must be positive")
    return elapsed_s / distance_km


def format_pace(seconds):
    """Format a pace as M:SS, rounded to the nearest second."""
    total = round(seconds)
    return f"{total // 60}:{total % 60:02d}"


def splits(distance_km, elapsed_s):
    """Elapsed time (whole seconds) at each full kilometre, assuming even pace."""
    per_km = pace_seconds(distance_km, elapsed_s)
    return [round(per_km * k) for k in range(1, int(distance_km) + 1)]

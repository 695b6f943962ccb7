"""Trip planning. A trip is a list of stops: dicts with name, lat, lon."""

import json

from geo import distance_km


def load_stops(path):
    """Read the stops of a trip from a JSON file."""
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)["stops"]


def leg_lengths(stops):
    """Distance in km of each leg between consecutive stops."""
    return [
        distance_km(a["lon"], a["lat"], b["lon"], b["lat"])
        for a, b in zip(stops, stops[1:])
    ]


def total_km(stops):
    """Length of the whole trip in km."""
    return sum(leg_lengths(stops))


def describe(stops):
    """Human-readable itinerary, one leg per line plus a total."""
    lines = [
        f"{a['name']} -> {b['name']}: {km:.0f} km"
        for a, b, km in zip(stops, stops[1:], leg_lengths(stops))
    ]
    lines.append(f"total: {total_km(stops):.0f} km")
    return "\n".join(lines)


if __name__ == "__main__":
    import sys
    print(describe(load_stops(sys.argv[1] if len(sys.argv) > 1 else "trip.json")))

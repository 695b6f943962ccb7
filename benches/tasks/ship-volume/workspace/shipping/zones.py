ZONES = {
    "domestic": {"base": 4.50, "per_kg": 1.20},
    "eu": {"base": 9.00, "per_kg": 2.50},
    "world": {"base": 15.00, "per_kg": 4.75},
}


def zone_rates(name):
    try:
        return ZONES[name.lower()]
    except KeyError:
        raise ValueError(f"unknown zone: {name}") from None

import math

from .zones import zone_rates


def price_for(zone, billable_kg):
    """Base fee plus a per-kg charge, rounding weight up to whole kg."""
    rates = zone_rates(zone)
    kg = max(1, math.ceil(billable_kg))
    return round(rates["base"] + rates["per_kg"] * kg, 2)

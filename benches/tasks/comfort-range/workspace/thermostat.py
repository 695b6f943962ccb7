"""Tiny thermostat helpers."""

COMFORT_MIN = 18
COMFORT_MAX = 24


def is_comfortable(celsius):
    """True when the temperature is within the comfort range (inclusive)."""
    return COMFORT_MIN <= celsius < COMFORT_MAX


def to_fahrenheit(celsius):
    return celsius * 9 / 5 + 32


def action(celsius):
    """What the thermostat should do at this temperature."""
    if celsius < COMFORT_MIN:
        return "heat"
    if celsius > COMFORT_MAX:
        return "cool"
    return "idle"

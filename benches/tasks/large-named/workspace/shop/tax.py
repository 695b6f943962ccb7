"""Sales tax by region."""

RATES = {"north": 0.07, "south": 0.05, "east": 0.06, "west": 0.08}


def tax(amount, region):
    return round(amount * RATES.get(region, 0.0), 2)

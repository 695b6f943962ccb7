from config import DEFAULT_CURRENCY, ROUNDING

RATES = {"EUR": 1.0, "USD": 1.08, "GBP": 0.86}


def convert(amount, to, frm=DEFAULT_CURRENCY):
    """Convert amount from currency frm to currency to."""
    return round(amount / RATES[frm] * RATES[to], ROUNDING)


def label(amount, currency=DEFAULT_CURRENCY):
    return f"{amount:.{ROUNDING}f} {currency}"

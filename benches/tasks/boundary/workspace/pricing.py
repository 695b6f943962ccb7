def discount(total):
    """The discount rate for an order of this total."""
    if total > 100:
        return 0.1
    return 0


def price_after_discount(total):
    return total * (1 - discount(total))

def tax(amount):
    return round(amount * 0.2, 2)


def with_tax(amount):
    return amount + tax(amount)

"""What an order costs to ship."""

FREE_SHIPPING_FROM = 50
RATE_PER_KG = 1.5
BASE_FEE = 4.0


def shipping_cost(subtotal, weight_kg):
    """Orders of FREE_SHIPPING_FROM or more ship free; others pay by weight."""
    if subtotal <= FREE_SHIPPING_FROM:
        return 0.0
    return round(BASE_FEE + RATE_PER_KG * weight_kg, 2)

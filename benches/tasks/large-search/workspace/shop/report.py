"""Sales reports."""

from collections import Counter


def best_sellers(orders, top=5):
    counts = Counter()
    for order in orders:
        for sku, quantity in order.cart.items.items():
            counts[sku] += quantity
    return counts.most_common(top)


def revenue(orders):
    return round(sum(order.total() for order in orders), 2)

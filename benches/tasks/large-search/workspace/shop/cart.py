"""A shopping cart: SKUs and quantities."""

from shop.catalog import find


class Cart:
    def __init__(self):
        self.items = {}

    def add(self, sku, quantity=1):
        if find(sku) is None:
            raise KeyError(f"unknown product {sku}")
        self.items[sku] = self.items.get(sku, 0) + quantity

    def remove(self, sku):
        self.items.pop(sku, None)

    def subtotal(self):
        return round(sum(find(sku)["price"] * quantity for sku, quantity in self.items.items()), 2)

    def weight(self):
        return round(sum(find(sku)["weight_kg"] * quantity for sku, quantity in self.items.items()), 2)

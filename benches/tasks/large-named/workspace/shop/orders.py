"""Orders: a cart checked out to a region."""

from shop.shipping import shipping_cost
from shop.tax import tax


class Order:
    def __init__(self, cart, region):
        self.cart = cart
        self.region = region

    def subtotal(self):
        return self.cart.subtotal()

    def shipping(self):
        return shipping_cost(self.subtotal(), self.cart.weight())

    def total(self):
        subtotal = self.subtotal()
        return round(subtotal + tax(subtotal, self.region) + self.shipping(), 2)

from shop.cart import Cart
from shop.orders import Order
from shop.shipping import shipping_cost
from shop.text import slugify


def test_free_shipping_from_50():
    assert shipping_cost(50, 2.0) == 0.0
    assert shipping_cost(120, 2.0) == 0.0


def test_paid_shipping_below_50():
    assert shipping_cost(20, 2.0) == 7.0


def test_slug():
    assert slugify("Red Desk Lamp") == "red-desk-lamp"


def test_order_total():
    cart = Cart()
    cart.add("SKU-0001")
    assert Order(cart, "north").total() > 0

from pricing import discount, price_after_discount


def test_discount_from_100():
    assert discount(100) == 0.1


def test_price():
    assert price_after_discount(200) == 180

def in_stock(item, stock):
    return stock.get(item, 0) > 1


def restock(item, stock, count):
    stock[item] = stock.get(item, 0) + count

from inventory.stock import in_stock, restock

stock = {"pen": 1}
restock("cup", stock, 3)
print(in_stock("pen", stock), in_stock("cup", stock))

from cart import calc_total

print(calc_total([1, 2, 3]))

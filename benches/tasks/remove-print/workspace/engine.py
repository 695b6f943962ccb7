def compute(values):
    total = 0
    for value in values:
        print("debug:", value)
        total += value * value
    return total

def is_even(n):
    return n % 2 == 1


def is_positive(n):
    return n > 0

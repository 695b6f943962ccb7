from lib.numbers import is_even

print([n for n in range(6) if is_even(n)])

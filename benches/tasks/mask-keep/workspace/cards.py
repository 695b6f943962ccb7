def digits_only(number):
    """Strip spaces and dashes from a card number."""
    return "".join(ch for ch in number if ch.isdigit())


def mask_card(number):
    """Hide all but the last digits of a card number with '*'."""
    digits = digits_only(number)
    return "*" * (len(digits) - 4) + digits[-4:]

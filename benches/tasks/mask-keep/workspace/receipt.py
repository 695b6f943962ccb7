from cards import mask_card


def receipt_line(card_number, amount):
    return f"Paid {amount:.2f} with card {mask_card(card_number)}"


if __name__ == "__main__":
    print(receipt_line("4111 1111 1111 1234", 19.99))

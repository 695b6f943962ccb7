def parse_age(text):
    return int(text)

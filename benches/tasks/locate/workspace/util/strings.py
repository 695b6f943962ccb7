def strip_all(xs):
    return [x.strip() for x in xs]

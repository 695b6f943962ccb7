from billing.line import Line


class Invoice:
    def __init__(self):
        self.lines = []

    def add(self, name, price, quantity=1):
        self.lines.append(Line(name, price, quantity))

    def total(self):
        return sum(line.amount() for line in self.lines)

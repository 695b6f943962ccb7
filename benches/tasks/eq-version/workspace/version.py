class Version:
    """A semantic version such as 1.4.2."""

    def __init__(self, text):
        parts = [int(p) for p in text.split(".")]
        while len(parts) < 3:
            parts.append(0)
        self.major, self.minor, self.patch = parts[:3]

    def __eq__(self, other):
        return (self.major, self.patch) == (other.major, other.patch)

    def __lt__(self, other):
        return (self.major, self.minor, self.patch) < (other.major, other.minor, other.patch)

    def __repr__(self):
        return f"Version('{self.major}.{self.minor}.{self.patch}')"

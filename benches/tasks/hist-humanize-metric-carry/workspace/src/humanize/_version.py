__version__ = version = "4.15.1.dev37"

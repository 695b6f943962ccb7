__version__ = version = "4.12.0"

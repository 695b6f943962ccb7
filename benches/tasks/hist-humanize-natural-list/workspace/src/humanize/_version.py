__version__ = version = "4.10.1.dev40"

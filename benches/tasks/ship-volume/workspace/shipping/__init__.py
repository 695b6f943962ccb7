from .parcel import Parcel
from .quote import quote

__all__ = ["Parcel", "quote"]

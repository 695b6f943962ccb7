from .rates import price_for


def quote(parcel):
    """Shipping price for a parcel."""
    return price_for(parcel.zone, parcel.billable_kg())

"""Great-circle helpers shared by the trip planner and the map view."""

import math

EARTH_RADIUS_KM = 6371.0


def distance_km(lat1, lon1, lat2, lon2):
    """Haversine distance in kilometres between two points in degrees."""
    phi1, phi2 = math.radians(lat1), math.radians(lat2)
    dphi = phi2 - phi1
    dlmb = math.radians(lon2 - lon1)
    a = (math.sin(dphi / 2) ** 2
         + math.cos(phi1) * math.cos(phi2) * math.sin(dlmb / 2) ** 2)
    return 2 * EARTH_RADIUS_KM * math.asin(math.sqrt(a))


def within_radius(center, point, radius_km):
    """True if `point` lies within `radius_km` of `center`.

    Both points are (lat, lon) tuples, as stored by the map view.
    """
    return distance_km(center[0], center[1], point[0], point[1]) <= radius_km

from dataclasses import dataclass

VOLUMETRIC_DIVISOR = 5000  # cm^3 per kg


@dataclass
class Parcel:
    weight_kg: float
    length_cm: float
    width_cm: float
    height_cm: float
    zone: str = "domestic"

    def volumetric_kg(self):
        volume = self.length_cm * self.width_cm * self.height_cm
        return volume / VOLUMETRIC_DIVISOR

    def billable_kg(self):
        """Carriers bill whichever is larger: actual or volumetric weight."""
        return min(self.weight_kg, self.volumetric_kg())

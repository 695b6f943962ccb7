"""Derive the secondary colours of a theme from its base palette."""

from colors import mix

WHITE = "#ffffff"
BLACK = "#000000"


def derive(palette):
    """Add hover/pressed shades for the accent colour of `palette`."""
    accent = palette["accent"]
    out = dict(palette)
    out["accent_hover"] = mix(accent, WHITE, 0.2)
    out["accent_pressed"] = mix(accent, BLACK, 0.2)
    return out


if __name__ == "__main__":
    for key, value in derive({"accent": "#3366cc", "bg": "#fafafa"}).items():
        print(f"{key:15} {value}")

"""Colour helpers for the theme editor.

Colours travel around as hex strings ('#1a2b3c'); RGB tuples are only
used for arithmetic.
"""


def hex_to_rgb(value):
    """'#1a2b3c', '1A2B3C' or short '#abc' -> (r, g, b) ints in 0..255."""
    s = value.strip().lstrip("#")
    if len(s) == 3:
        s = "".join(ch * 2 for ch in s)
    if len(s) != 6:
        raise ValueError(f"not a hex colour: {value!r}")
    try:
        return tuple(int(s[i:i + 2], 16) for i in (0, 2, 4))
    except ValueError:
        raise ValueError(f"not a hex colour: {value!r}") from None


def rgb_to_hex(rgb):
    """(26, 43, 60) -> '#1a2b3c'. Components must be in 0..255."""
    if any(not 0 <= c <= 255 for c in rgb):
        raise ValueError(f"component out of range: {rgb!r}")
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def mix(a, b, t=0.5):
    """Blend two hex colours: t=0 gives `a`, t=1 gives `b`."""
    ra, rb = hex_to_rgb(a), hex_to_rgb(b)
    return rgb_to_hex(tuple(round(x + (y - x) * t) for x, y in zip(ra, rb)))

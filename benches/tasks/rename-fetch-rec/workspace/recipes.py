"""The recipe book: a small in-memory store keyed by recipe name."""

RECIPES = {
    "pancakes": {
        "serves": 4,
        "ingredients": {"flour_g": 200, "milk_ml": 300, "eggs": 2, "sugar_g": 25},
    },
    "flatbread": {
        "serves": 6,
        "ingredients": {"flour_g": 300, "water_ml": 180, "salt_g": 5},
    },
}


def fetch_rec(name):
    """Return a copy of the recipe called `name` (case-insensitive).

    Raises KeyError when there is no such recipe.
    """
    key = name.strip().lower()
    if key not in RECIPES:
        raise KeyError(f"no recipe named {name!r}")
    recipe = RECIPES[key]
    return {"name": key, "serves": recipe["serves"],
            "ingredients": dict(recipe["ingredients"])}


def ingredient_names(name):
    """Sorted ingredient names of a recipe, without their units."""
    return sorted(i.rsplit("_", 1)[0] for i in fetch_rec(name)["ingredients"])

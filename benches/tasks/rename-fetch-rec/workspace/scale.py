"""Scale a recipe to a different number of servings."""

from recipes import fetch_rec


def scaled(name, servings):
    """Ingredient amounts for `servings` people, rounded to whole units."""
    recipe = fetch_rec(name)
    factor = servings / recipe["serves"]
    return {k: round(v * factor) for k, v in recipe["ingredients"].items()}

"""Command line for the recipe book.

    python3 cli.py show NAME
    python3 cli.py scale NAME SERVINGS
"""

import sys

import recipes
from scale import scaled


def main(argv):
    if len(argv) == 3 and argv[1] == "show":
        recipe = recipes.fetch_rec(argv[2])
        print(f"{recipe['name']} (serves {recipe['serves']})")
        for k, v in recipe["ingredients"].items():
            print(f"  {k}: {v}")
        return 0
    if len(argv) == 4 and argv[1] == "scale":
        for k, v in scaled(argv[2], int(argv[3])).items():
            print(f"  {k}: {v}")
        return 0
    print(__doc__.strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))

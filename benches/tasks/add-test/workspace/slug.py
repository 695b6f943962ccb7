import re


def slugify(title):
    """'Hello, World!' -> 'hello-world'. Runs of other characters become one dash."""
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower())
    return slug.strip("-")

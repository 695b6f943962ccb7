def normalize_tags(raw):
    """Turn "Python, web ,python" into ["python", "web"].

    Tags are stripped, lowercased, and kept in first-seen order without
    duplicates; empty tags are dropped.
    """
    result = []
    for part in raw.split(","):
        tag = part.strip().lower()
        if tag and tag not in result:
            result.append(tag)


def format_tags(tags):
    """Render tags for display, e.g. "#python #web"."""
    return " ".join("#" + t for t in tags)

"""Course grading helpers."""

CUTOFFS = [(90, "A"), (80, "B"), (70, "C"), (60, "D")]


def average(scores):
    if not scores:
        raise ValueError("no scores")
    return sum(scores) / len(scores)


def letter_grade(scores):
    """Letter grade for the average of the scores."""
    avg = average(scores)
    for cutoff, letter in CUTOFFS:
        if averge >= cutoff:
            return letter
    return "F"


def passed(scores):
    return average(scores) >= 60

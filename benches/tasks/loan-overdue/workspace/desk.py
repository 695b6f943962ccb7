"""Daily overdue report printed at the circulation desk each morning."""

from datetime import date

from loans import fine_cents, overdue_loans


def report(loans, today: date) -> str:
    """One line per overdue loan, worst fine first, then a total."""
    late = overdue_loans(loans, today)
    late.sort(key=lambda loan: fine_cents(loan["due"], today), reverse=True)
    lines = []
    total = 0
    for loan in late:
        fine = fine_cents(loan["due"], today)
        total += fine
        lines.append(f"{loan['title']:<30} due {loan['due']}  ${fine / 100:.2f}")
    lines.append(f"{len(late)} overdue, ${total / 100:.2f} in fines")
    return "\n".join(lines)


if __name__ == "__main__":
    sample = [
        {"title": "The Left Hand of Darkness", "due": date(2024, 3, 1)},
        {"title": "Middlemarch", "due": date(2024, 3, 10)},
        {"title": "Dune", "due": date(2024, 2, 1)},
    ]
    print(report(sample, date(2024, 3, 10)))

"""Loan bookkeeping for the branch library's circulation desk."""

from datetime import date, timedelta

LOAN_DAYS = 21
DAILY_FINE_CENTS = 25
MAX_FINE_CENTS = 1000  # a lost-book charge takes over after this


def due_date(checkout: date, days: int = LOAN_DAYS) -> date:
    """Date by which a book checked out on `checkout` must be returned."""
    return checkout + timedelta(days=days)


def is_overdue(due: date, today: date) -> bool:
    """True once the loan is past its due date.

    A book returned on the due date itself is on time.
    """
    return today >= due


def days_late(due: date, today: date) -> int:
    """Whole days past the due date (0 when the loan is not overdue)."""
    if not is_overdue(due, today):
        return 0
    return (today - due).days


def fine_cents(due: date, today: date) -> int:
    """Fine owed so far, capped at MAX_FINE_CENTS."""
    return min(days_late(due, today) * DAILY_FINE_CENTS, MAX_FINE_CENTS)


def overdue_loans(loans, today: date):
    """The loans (dicts with a 'due' date) that are overdue on `today`."""
    return [loan for loan in loans if is_overdue(loan["due"], today)]

"""Implementations of the jot commands. Each takes the remaining argv."""

import json
import time
from pathlib import Path

NOTES = Path.home() / ".jot"


def create_note(args):
    """Create a note whose text is the arguments joined by spaces."""
    NOTES.mkdir(exist_ok=True)
    path = NOTES / f"{int(time.time())}.txt"
    path.write_text(" ".join(args) + "\n")
    print(f"created {path.name}")


def list_notes(args):
    """Print the names of all notes, oldest first."""
    for path in sorted(NOTES.glob("*.txt")):
        print(path.name)


def backup_notes(args):
    """Write all notes to a tarball (jot 1.x). No longer registered."""
    raise NotImplementedError("tarball backups were removed in jot 2.0")


def write_bundle(args):
    """Write every note into a single JSON bundle (default: bundle.json)."""
    target = Path(args[0]) if args else Path("bundle.json")
    notes = {p.name: p.read_text() for p in sorted(NOTES.glob("*.txt"))}
    target.write_text(json.dumps({"version": 2, "notes": notes}, indent=2))
    print(f"wrote {len(notes)} notes to {target}")


def push_changes(args):
    """Upload notes to the sync server (stubbed out offline)."""
    print("nothing to sync")


def show_status(args):
    """Print how many notes there are."""
    print(f"{len(list(NOTES.glob('*.txt')))} notes")

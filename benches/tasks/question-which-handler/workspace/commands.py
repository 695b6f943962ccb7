"""Command registry: which handler serves which command name."""

import handlers

COMMANDS = {
    "new": handlers.create_note,
    "list": handlers.list_notes,
    "sync": handlers.push_changes,
    "export": handlers.write_bundle,
    "status": handlers.show_status,
}

# Names from jot 1.x that still work. "backup" became "export" in 2.0 when
# bundles replaced the old tarball backups.
ALIASES = {
    "ls": "list",
    "backup": "export",
    "push": "sync",
}

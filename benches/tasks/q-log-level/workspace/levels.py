"""Named verbosity presets, mapped to logging level names."""

LOUD = "DEBUG"
NORMAL = "INFO"
QUIET = "WARNING"
SILENT = "CRITICAL"

"""A small web shop."""

"""The Redis protocol: every key, stream, group and script, by owner (see keys.py)."""

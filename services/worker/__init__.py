"""The Arena worker service."""

"""The Arena referee service."""

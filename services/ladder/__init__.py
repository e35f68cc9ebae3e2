"""The Arena ladder service."""

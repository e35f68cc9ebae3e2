"""The Arena registry service."""

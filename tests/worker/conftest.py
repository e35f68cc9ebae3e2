"""The referee tests' in-process loops fixture, shared here."""

from tests.referee.conftest import loops

__all__ = ["loops"]

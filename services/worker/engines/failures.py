"""Why a protocol engine gave no usable move: one typed reason per way it can fail."""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum


class FailureReason(StrEnum):
    ILLEGAL_MOVE = "illegal_move"  # a well-formed move the rules refuse
    GARBAGE = "garbage"  # a line the protocol does not allow where an answer was due
    TIMEOUT = "timeout"  # no answer within the move's limit plus the grace
    CRASH = "crash"  # the process exited or was killed
    MEMORY_LIMIT = "memory_limit"  # it used more memory than its sandbox allows
    CPU_LIMIT = "cpu_limit"  # it used up its process's CPU seconds
    OUTPUT_LIMIT = "output_limit"  # it printed (or wrote) more than allowed
    REFUSED = "refused"  # it answered ERROR/UNKNOWN: it cannot play this request
    START_FAILED = "start_failed"  # it could not be started or did not finish its handshake
    STOPPED = "stopped"  # its move stopped being wanted (match cancelled, worker stopping)


# After these the engine process is still sound and stays in the pool.
_PROCESS_SURVIVES = frozenset({FailureReason.ILLEGAL_MOVE, FailureReason.REFUSED})


class EngineFailure(Exception):
    """An engine's failure to answer a move; ``stderr_tail`` keeps the last lines it wrote
    on stderr, for the bot's owner."""

    def __init__(self, reason: FailureReason, detail: str, stderr_tail: Sequence[str] = (),
                 move: int | None = None) -> None:
        self.reason = reason
        self.detail = detail
        self.stderr_tail = tuple(stderr_tail)
        self.move = move  # the square of an illegal move, when it names one
        super().__init__(f"{reason.value}: {detail}")

    @property
    def process_survives(self) -> bool:
        """True when the failure says nothing bad about the process itself."""
        return self.reason in _PROCESS_SURVIVES

    def report(self) -> str:
        """The failure with the engine's last stderr lines, as an owner would read it."""
        if not self.stderr_tail:
            return str(self)
        return f"{self}\nlast stderr lines:\n" + "\n".join(self.stderr_tail)

"""`arena status`: the live picture of a running arena in one screen (or JSON).

It asks a referee (``Status.GetStatus``: workers, queues, matches, cache, forfeits), the
ladder service (running ladders, for their progress and ETA) and every known service's
gRPC health.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Final

from arena.clients.common import add_json_flag, client_from_args, print_json, to_dict
from arena.clients.sdk import ROLES, ArenaClient
from arena.services.common.protocol.queues import FORFEIT_SCAN, FORFEITS_SHOWN

from arena.argtypes import integer_in
from arena.errors import ArenaError
from arena.text import printable
from arena.v1 import ladder_pb2, match_pb2, status_pb2

# Each part's deadline unless --timeout says otherwise: an operator asks for the status
# when something is wrong, and a part that cannot answer within it is named as such.
STATUS_TIMEOUT_S: Final = 3.0


@dataclass(frozen=True)
class LadderEta:
    """A running ladder's progress and, once a game is done, when it should end."""

    ladder: ladder_pb2.LadderInfo
    eta_s: float | None

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.ladder.id, "name": self.ladder.config.name,
                "games_done": self.ladder.games_done, "games_total": self.ladder.games_total,
                "eta_s": None if self.eta_s is None else round(self.eta_s, 1),
                "waiting": self.ladder.waiting}


def ladder_eta(ladder: ladder_pb2.LadderInfo, now_s: float) -> LadderEta:
    """The remaining games at the ladder's average pace so far (None before its first)."""
    elapsed = now_s - ladder.created_at.ToMilliseconds() / 1000
    done, total = ladder.games_done, ladder.games_total
    if done <= 0 or elapsed <= 0:
        return LadderEta(ladder, None)
    return LadderEta(ladder, max(0.0, (total - done) * elapsed / done))


def running_ladders(client: ArenaClient, now_s: float, most: int = 200) -> list[LadderEta]:
    """The newest ``most`` running ladders (it read the newest ``most`` ladders and kept the
    running ones: a ladder that ran long dropped out once that many newer ones ended)."""
    return [ladder_eta(info, now_s)
            for info in client.iter_ladders(limit=most, running_only=True)
            if info.status == ladder_pb2.LADDER_STATUS_RUNNING]  # none ended since


def add_status_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    status = sub.add_parser(
        "status", help="the live picture: services, workers, queues, matches, ladders",
        description="Services up, workers alive with their engines and current job, the move "
                    "queue and its oldest waiting job, matches running, ladders in progress "
                    "with an ETA (and why one waits, if it does), the shared cache's recent hit "
                    "rate and the latest forfeits.")
    status.add_argument("--forfeits", type=integer_in(1, FORFEIT_SCAN), default=FORFEITS_SHOWN,
                        help=f"forfeits to list, of the last {FORFEIT_SCAN} matches finished "
                             f"(1..{FORFEIT_SCAN}, default {FORFEITS_SHOWN})")
    add_json_flag(status)
    status.set_defaults(func=cmd_status)


def cmd_status(args: argparse.Namespace) -> int:
    """Exit 0 when every service answers, the referee gave its picture and the ladder
    service (if one is known) its running ladders, else 1 (with what could be learnt: a
    service down is when an operator runs this).

    The parts are asked at once, each with a deadline of ``--timeout`` or else
    ``STATUS_TIMEOUT_S``: with the durable Redis stalled the command answers within
    seconds, the referee naming Redis (its status reads wait 1.5 s for it)."""
    with client_from_args(args) as client:
        client.timeout_s = getattr(args, "timeout", None) or STATUS_TIMEOUT_S
        roles = [role for role in ROLES if getattr(client.addresses, role)]
        for role in roles:  # opened here: the threads below share them
            client.channel(role)
        with ThreadPoolExecutor(max_workers=len(roles) + 1) as pool:
            asked = pool.submit(ladders_or_why, client)
            checks = {role: pool.submit(client.unhealthy, role) for role in roles}
            down = {role: why for role, check in checks.items() if (why := check.result())}
            services = {role: role not in down for role in roles}
            arena, missing = picture_or_why(client, down, args.forfeits)
            ladders = asked.result()
        asked_ladders = bool(client.addresses.ladder)
    if args.json:
        print_json({"services": services, **({"services_down": down} if down else {}),
                    "arena": None if arena is None else to_dict(arena),
                    "ladders": (None if isinstance(ladders, str)
                                else [ladder.as_dict() for ladder in ladders]),
                    **({"error": missing} if missing else {}),
                    **({"ladders_error": ladders} if isinstance(ladders, str) else {})})
    else:
        print(render(arena, services, ladders, time.time(), missing, down))
    ladders_failed = asked_ladders and isinstance(ladders, str)
    return 0 if arena is not None and not ladders_failed and all(services.values()) else 1


def picture_or_why(client: ArenaClient, down: dict[str, str], forfeits: int,
                   ) -> tuple[status_pb2.ArenaStatus | None, str]:
    """The referee's picture and "", or None and why not (``down``: why each service that
    failed its health check did: a TLS mistake is said as one, not as a referee down)."""
    if "referee" in down:
        return None, f"the referee does not answer its health check: {down['referee']}"
    try:
        return client.get_status(forfeits), ""
    except ArenaError as exc:
        return None, str(exc)


def ladders_or_why(client: ArenaClient) -> list[LadderEta] | str:
    """The running ladders, or why they are not known: a ladder service down, or unable
    to read them (its Redis stalled), is not an arena without ladders."""
    if not client.addresses.ladder:
        return "no ladder service address"
    try:
        return running_ladders(client, time.time())
    except ArenaError as exc:  # the rest of the picture is still worth showing
        return str(exc)


def _age(ms: float) -> str:
    seconds = ms / 1000
    if seconds < 90:
        return f"{seconds:.1f} s"
    return f"{seconds / 60:.1f} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"


def _referee(referee: status_pb2.ServiceStatus) -> str:
    if not referee.up:
        return (f"{referee.name} GONE (silent {_age(referee.idle_ms)}, "
                f"matches held: {referee.running})")
    left = (f", {referee.awaiting_takeover} left by its run before a restart, awaiting "
            "takeover" if referee.awaiting_takeover else "")
    return f"{referee.name} up ({referee.running} running{left})"


def render(arena: status_pb2.ArenaStatus | None, services: dict[str, bool],
           ladders: list[LadderEta] | str, now_s: float, missing: str = "",
           down: dict[str, str] | None = None) -> str:
    """The screen; without the referee's picture (``missing`` says why) the services and
    the running ladders (or why they are not known). ``down``: why each service down is
    (the referee's is in ``missing``)."""
    if not services:  # no stack.json and no address given: nothing to ask
        return f"no Arena services known here: {missing}"
    lines = ["services: " + "  ".join(f"{role} {'up' if up else 'DOWN'}"
                                      for role, up in services.items())]
    lines += [f"  {why}" for role, why in (down or {}).items() if role != "referee"]
    if arena is None:
        lines.append(f"no picture of workers, queues and matches: {missing}")
        lines += _ladder_lines(ladders)
        return "\n".join(lines)
    referees = "  ".join(_referee(r) for r in arena.referees)
    lines.append(f"referees: {referees or 'none'}")
    lines += _workers(arena, now_s)
    moves = arena.moves
    oldest = f", oldest waiting {_age(moves.oldest_waiting_ms)}" if moves.lag else ""
    lines.append(f"move queue: {moves.lag} waiting, {moves.pending} running{oldest}; "
                 f"{arena.dead_letters} dead letters")
    lines += _engine_queue_lines(arena.engine_moves)
    waiting = (f", {arena.matches_waiting} waiting for their owner's running matches"
               if arena.matches_waiting else "")
    lines.append(f"matches: {arena.matches_running} running, {arena.matches.lag} queued{waiting}; "
                 f"{arena.matches_finished} finished in the last {arena.window_s // 60} min "
                 f"({arena.forfeits_in_window} by forfeit)")
    rate = (f"{100 * arena.cache_hits / arena.cache_probes:.1f}% of {arena.cache_probes} "
            "probes" if arena.cache_probes else "no probes")
    lines.append(f"shared cache (last minutes): {rate}")
    lines += _ladder_lines(ladders)
    # The last forfeits among the recent finished matches, however old: each says when.
    lines.append(f"recent forfeits: {len(arena.recent_forfeits) or 'none'}")
    for forfeit in arena.recent_forfeits:
        name = match_pb2.Termination.Name(forfeit.termination).removeprefix("TERMINATION_")
        ago = _age(max(0.0, now_s * 1000 - forfeit.finished_at.ToMilliseconds()))
        lines.append(f"  {forfeit.match_id} {forfeit.bot} {name} ({ago} ago): "
                     f"{forfeit.detail}")
    return "\n".join(lines)


def _engine_queue_lines(queues: Iterable[status_pb2.QueueStatus]) -> list[str]:
    """A line for each protocol engine build with moves waiting or running (its own queue,
    counted in the move queue's line): which engine a waiting move needs a worker for."""
    lines = []
    for queue in queues:
        if not (queue.lag or queue.pending):
            continue
        oldest = f", oldest waiting {_age(queue.oldest_waiting_ms)}" if queue.lag else ""
        lines.append(f"  engine {printable(queue.engine)} ({queue.build[:12]}): "
                     f"{queue.lag} waiting, {queue.pending} running{oldest}")
    return lines


def _ladder_lines(ladders: list[LadderEta] | str) -> list[str]:
    if isinstance(ladders, str):
        return [f"ladders running: unknown ({ladders})"]
    lines = [f"ladders running: {len(ladders)}"]
    for item in ladders:
        eta = "ETA unknown" if item.eta_s is None else f"ETA {_age(item.eta_s * 1000)}"
        waiting = f"; waiting: {item.ladder.waiting}" if item.ladder.waiting else ""
        lines.append(f"  {item.ladder.id} {item.ladder.config.name or ''} "
                     f"{item.ladder.games_done}/{item.ladder.games_total} games, {eta}{waiting}")
    return lines


def _workers(arena: status_pb2.ArenaStatus, now_s: float) -> list[str]:
    pools = Counter(worker.pool for worker in arena.workers)
    split = ", ".join(f"{count} {pool}" for pool, count in sorted(pools.items()))
    lines = [f"workers alive: {len(arena.workers)}" + (f" ({split})" if split else "")]
    for worker in arena.workers:
        doing = "idle"
        if worker.job_id:
            since = _age(now_s * 1000 - worker.job_since_unix_ms)
            doing = f"{worker.bot} on {worker.match_id} ply {worker.ply} for {since}"
        lines.append(f"  {worker.worker_id} ({worker.pool}) [{','.join(worker.games)}] "
                     f"busy {100 * worker.busy_ratio:.0f}%, {worker.jobs_done} jobs; {doing}")
    return lines

"""A real stack (processes started by the launcher, metrics on, JSON logs) plays a small
ladder with a bot that cannot be reached; the metrics, the logs and `arena status` must
tell exactly what happened."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path

import pytest
import redis
from arena.clients.sdk import ArenaClient
from arena.services.common.embedded_redis import EmbeddedRedis
from arena.services.common.launcher import Launcher
from prometheus_client.parser import text_string_to_metric_families

from arena.errors import InvalidArgumentError
from arena.games import new_position
from arena.v1 import common_pb2, ladder_pb2, match_pb2, referee_pb2, referee_pb2_grpc
from tests.support.bots import builtin_bot, external_bot
from tests.support.servers import ADMIN_TOKEN, client, metadata
from tests.system.conftest import FAST_ENV

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]
LAB = {"evaluator": "lab", "look_ahead": 0}


def scrape(address: str) -> Samples:
    with urllib.request.urlopen(f"http://{address}/metrics", timeout=10) as reply:
        text = reply.read().decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def scrape_all(launcher: Launcher) -> dict[str, Samples]:
    manifest = launcher.manifest()["metrics"]
    assert isinstance(manifest, dict)
    return {name: scrape(address) for name, address in manifest.items()}


def total(samples: dict[str, Samples], name: str, **labels: str) -> float:
    """The sum of ``name`` over every process and every label set that has ``labels``."""
    wanted = set(labels.items())
    return sum(value for per_process in samples.values()
               for (metric, found), value in per_process.items()
               if metric == name and wanted <= set(found))


def delta(before: dict[str, Samples], after: dict[str, Samples], name: str,
          **labels: str) -> float:
    return total(after, name, **labels) - total(before, name, **labels)


def unused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def run_ladder(sdk: ArenaClient) -> ladder_pb2.LadderInfo:
    config = ladder_pb2.LadderConfig(
        name="observed", game=common_pb2.GameSpec(kind=common_pb2.GAME_KIND_OTHELLO),
        bots=[common_pb2.BotRef(name=n) for n in ("lab-a", "lab-b", "gone")],
        format=ladder_pb2.LADDER_FORMAT_ROUND_ROBIN, games_per_pairing=2,
        opening_suite="othello-balanced", seed=5,
        time_control=common_pb2.TimeControl(move_time_ms=2000))
    info = sdk.create_ladder(config)
    deadline = time.monotonic() + 180
    while not (started := list(sdk.get_standings(info.id).ladder.match_ids)):
        assert time.monotonic() < deadline, "the ladder started no game in 180 s"
        time.sleep(0.05)
    leave_a_watch(sdk, started[0])
    while sdk.get_standings(info.id).ladder.status != ladder_pb2.LADDER_STATUS_FINISHED:
        assert time.monotonic() < deadline, "the ladder did not finish in 180 s"
        time.sleep(0.2)
    return sdk.get_standings(info.id).ladder


def leave_a_watch(sdk: ArenaClient, match_id: str) -> None:
    """A viewer of a game being played who reads its first event and goes away."""
    events = referee_pb2_grpc.RefereeStub(sdk.channel("referee")).WatchMatch(
        referee_pb2.WatchMatchRequest(match_id=match_id), metadata=metadata(ADMIN_TOKEN),
        timeout=60)
    next(events)
    events.cancel()


def test_metrics_logs_and_status_of_a_ladder(
        redis_server: EmbeddedRedis, cache_server: EmbeddedRedis, redis_client: redis.Redis,
        cache_client: redis.Redis, tmp_path: Path) -> None:
    env = {**FAST_ENV, "ARENA_LOG_FORMAT": "json"}
    with Launcher(home=tmp_path, workers=2, env=env, metrics=True, admin_token=ADMIN_TOKEN,
                  redis_urls=(redis_server.url, cache_server.url)) as stack, \
            client(registry=stack.target("registry"), referee=stack.target("referee"),
                   ladder=stack.target("ladder"), engine=stack.target("analyst")) as sdk:
        builtin_bot(sdk, "lab-a", LAB)
        builtin_bot(sdk, "lab-b", {"evaluator": "lab", "look_ahead": 1})
        external_bot(sdk, "gone", f"127.0.0.1:{unused_port()}")
        status = sdk.get_status()
        assert sorted((w.worker_id, w.pool) for w in status.workers) == [
            ("analyst-1", "analysis"), ("worker-1", "match"), ("worker-2", "match")]
        assert all("othello" in w.games and "builtin" in w.engines for w in status.workers)
        before = scrape_all(stack)
        # the series the alerts read are there at 0 before anything happened: the first
        # dead letter of a process went unseen by increase() (it appeared at 1)
        for name, labels, role in (
                ("arena_forfeits_total", (("termination", "dead_lettered"),), "referee"),
                ("arena_move_jobs_dead_lettered_total", (("reason", "too_many_deliveries"),),
                 "worker-1"),
                ("arena_move_jobs_dead_lettered_total", (("reason", "unreadable"),),
                 "worker-2")):
            assert before[role].get((name, labels)) == 0.0, (name, labels, role)
        ladder = run_ladder(sdk)
        hint = sdk.analyze(common_pb2.Position(
            game=common_pb2.GameSpec(kind=common_pb2.GAME_KIND_OTHELLO),
            text=new_position("othello").to_text()), common_pb2.BotRef(name="lab-b"))
        assert hint.HasField("move")
        matches = [sdk.get_match(match_id) for match_id in ladder.match_ids]
        time.sleep(1.5)  # the workers' presence carries their latest figures
        after = scrape_all(stack)
        status = sdk.get_status(forfeits=20)
        # a negative count listed all but the last few (a slice from the end)
        with pytest.raises(InvalidArgumentError) as refused:
            sdk.get_status(forfeits=-3)
        assert [v.field for v in refused.value.violations] == ["forfeits"]
        printed = subprocess.run(
            [sys.executable, "-m", "arena.clients", "status", "--json"], capture_output=True,
            text=True, timeout=60, env=dict(os.environ, ARENA_HOME=str(tmp_path),
                                            ARENA_TOKEN=ADMIN_TOKEN))
        text = subprocess.run(
            [sys.executable, "-m", "arena.clients", "status"], capture_output=True,
            text=True, timeout=60, env=dict(os.environ, ARENA_HOME=str(tmp_path),
                                            ARENA_TOKEN=ADMIN_TOKEN))
        hung = hung_referee_status(stack, tmp_path)
    check_counters(before, after, matches)
    check_roles(after)
    check_status(status, matches)
    assert printed.returncode == 0, printed.stderr
    shown = json.loads(printed.stdout)
    assert shown["services"] == {"registry": True, "referee": True, "ladder": True,
                                 "engine": True}
    assert len(shown["arena"]["workers"]) == 3  # two match workers and the analyst
    assert "workers alive: 3 (1 analysis, 2 match)" in text.stdout.splitlines()
    lines = text.stdout.splitlines()
    forfeits = lines[lines.index("recent forfeits: 4") + 1:]
    assert len(forfeits) == 4 and all(  # each says when it ended: seconds ago, here
        re.fullmatch(r"  \S+ gone@1 BOT_UNREACHABLE \(\d+\.\d s ago\): .+", line)
        for line in forfeits), forfeits
    follow_one_move(tmp_path / "logs", matches)
    # A referee that hangs: the command said only "did not answer in time" after 13 s.
    shown, printed = hung
    assert (shown.returncode, printed.returncode) == (1, 1), (shown.stderr, printed.stderr)
    assert json.loads(shown.stdout)["arena"] is None
    assert json.loads(shown.stdout)["services"]["referee"] is False
    assert printed.stdout.splitlines()[0] == (
        "services: registry up  referee DOWN  ladder up  engine up")
    said = printed.stdout.splitlines()[1]  # and why, in the words of any other command
    assert said.startswith("no picture of workers, queues and matches: the referee does not "
                           "answer its health check: referee at ") and said.endswith(
        " did not answer in time"), said


def check_roles(samples: dict[str, Samples]) -> None:
    """Each process shows the figures its role counts, and its own: every process showed
    every metric, at 0 where it never counts it (`arena_matches_started_total 0` on a
    worker). An analyst showed a match worker's figures under their names (busy time,
    jobs, cache), which the dashboard's busy workers summed with the match workers'."""
    shown = {name: {metric for metric, _ in per_process} for name, per_process in samples.items()}
    assert set(shown) == {"registry", "referee", "ladder", "worker-1", "worker-2", "analyst-1"}
    for name, metrics in shown.items():
        assert "process_cpu_seconds_total" in metrics, name
        assert ("arena_matches_started_total" in metrics) == (name == "referee"), name
        for matches_only in ("arena_cache_probes_total", "arena_worker_busy_seconds_total",
                             "arena_move_jobs_taken_total", "arena_move_wait_seconds_count"):
            assert (matches_only in metrics) == name.startswith("worker-"), (name, matches_only)
        assert ("arena_analysis_busy_seconds_total" in metrics) == (name == "analyst-1"), name
        assert ("arena_ladder_games_counted_total" in metrics) == (name == "ladder"), name
        assert "grpc_server_handled_total" in metrics, name  # every one serves gRPC calls
    assert samples["analyst-1"][("arena_analysis_busy_seconds_total", ())] > 0  # the hint


def hung_referee_status(stack: Launcher, home: Path,
                        ) -> tuple[subprocess.CompletedProcess[str], ...]:
    """`arena status --json` and `arena status` while the referee process is stopped."""
    pid = stack.manifest()["pids"]["referee"]
    assert isinstance(pid, int)
    env = dict(os.environ, ARENA_HOME=str(home), ARENA_TOKEN=ADMIN_TOKEN)
    os.kill(pid, signal.SIGSTOP)
    try:
        return tuple(subprocess.run([sys.executable, "-m", "arena.clients", "status", *json],
                                    capture_output=True, text=True, timeout=60, env=env)
                     for json in (["--json"], []))
    finally:
        os.kill(pid, signal.SIGCONT)


def check_counters(before: dict[str, Samples], after: dict[str, Samples],
                   matches: list[match_pb2.Match]) -> None:
    played = sum(1 for m in matches for r in m.moves if r.move.text != "pass")
    terminations = Counter(match_pb2.Termination.Name(m.result.termination)
                           .removeprefix("TERMINATION_").lower() for m in matches)
    forfeits = Counter(match_pb2.Termination.Name(m.result.termination)
                       .removeprefix("TERMINATION_").lower()
                       for m in matches if m.result.forfeited)
    assert forfeits == {"bot_unreachable": 4}  # every game of "gone" (2 per opponent)
    assert delta(before, after, "arena_move_jobs_answered_total", error="none") == played
    assert delta(before, after, "arena_moves_judged_total", verdict="recorded") == played
    unreachable = delta(before, after, "arena_move_jobs_answered_total",
                        error="bot_unreachable")
    assert unreachable == forfeits["bot_unreachable"]
    answered = delta(before, after, "arena_move_jobs_answered_total")
    assert delta(before, after, "arena_move_jobs_published_total") == answered
    assert delta(before, after, "arena_move_jobs_taken_total") == answered
    assert delta(before, after, "arena_moves_judged_total", verdict="forfeit") == unreachable
    for termination, count in terminations.items():
        assert delta(before, after, "arena_matches_finished_total",
                     termination=termination) == count
    for termination, count in forfeits.items():
        assert delta(before, after, "arena_forfeits_total", termination=termination) == count
    assert delta(before, after, "arena_ladder_games_counted_total") == len(matches) == 6
    probes = delta(before, after, "arena_cache_probes_total")
    hits = delta(before, after, "arena_cache_hits_total")
    assert probes == played and 0 <= hits <= probes  # every built-in move asks the cache
    searched = delta(before, after, "arena_engine_seconds_count", game="othello")
    assert searched + hits == played
    assert delta(before, after, "arena_move_wait_seconds_count") == answered
    assert delta(before, after, "arena_move_jobs_dead_lettered_total") == 0
    assert total(after, "arena_queue_exporter") == 1  # one referee exports the queues
    assert total(after, "arena_workers_alive") == 2
    assert total(after, "arena_stream_group_lag", group="workers") == 0
    # The viewer who left counts as CANCELLED, not as a server error; there were none.
    assert delta(before, after, "grpc_server_handled_total", grpc_method="WatchMatch",
                 grpc_code="CANCELLED") == 1
    for error in ("UNKNOWN", "INTERNAL"):
        assert total(after, "grpc_server_handled_total", grpc_code=error) == 0, error
    handled = delta(before, after, "grpc_server_handled_total",
                    grpc_service="arena.v1.Referee", grpc_method="CreateMatch", grpc_code="OK")
    # Each game created through the referee (a retried create returns the same match).
    assert handled >= len(matches)


def check_status(status: object, matches: list[match_pb2.Match]) -> None:
    from arena.v1 import status_pb2

    assert isinstance(status, status_pb2.ArenaStatus)
    assert status.matches_finished == len(matches) and status.forfeits_in_window == 4
    assert status.moves.lag == 0 and status.dead_letters == 0
    assert len(status.workers) == 3 and all(not w.job_id for w in status.workers)
    assert sum(w.jobs_done for w in status.workers) > 0
    assert status.cache_probes >= status.cache_hits >= 0
    assert len(status.recent_forfeits) == 4
    for forfeit in status.recent_forfeits:
        assert forfeit.termination == match_pb2.TERMINATION_BOT_UNREACHABLE
        assert forfeit.bot == "gone@1" and forfeit.match_id in {m.id for m in matches}


def follow_one_move(logs: Path, matches: list[match_pb2.Match]) -> None:
    """One grep for a move's job id finds its line in the referee's log and the worker's."""
    match = next(m for m in matches if not m.result.forfeited)
    record = match.moves[5] if match.moves[5].move.text != "pass" else match.moves[6]
    referee_lines = [json.loads(line) for line in (logs / "referee.log").read_text()
                     .splitlines() if line.startswith("{")]
    recorded = [line for line in referee_lines if line.get("match_id") == match.id
                and line.get("ply") == record.ply and line["msg"].startswith("recorded")]
    assert len(recorded) == 1, recorded
    job_id = recorded[0]["job_id"]
    assert recorded[0]["service"] == "referee" and recorded[0]["instance"] == "referee"
    found = [json.loads(line) for path in sorted(logs.glob("*.log"))
             for line in path.read_text().splitlines() if job_id in line]
    services = {line["service"]: line for line in found}
    assert set(services) == {"referee", "worker"}
    worker = services["worker"]
    # the move as the referee names it (the worker said its square number) and its ladder
    assert worker["msg"] == f"answered move {record.move.text}"
    assert worker["ladder_id"] == recorded[0]["ladder_id"] == match.config.ladder_id
    assert worker["instance"] == record.worker_id
    assert (worker["match_id"], worker["ply"]) == (match.id, record.ply)
    assert worker["bot"] == recorded[0]["bot"] and "@" in worker["bot"]
    ladder_lines = [line for line in referee_lines if line.get("ladder_id") == match.config
                    .ladder_id and line.get("match_id") == match.id]
    assert ladder_lines  # the match's lines carry its ladder

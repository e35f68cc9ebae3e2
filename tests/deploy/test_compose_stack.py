"""The Compose stack from the host: every role healthy over gRPC health, the Redis roles
configured as documented, services unprivileged, the admin token from the secret file, and
a small ladder driven through the SDK that survives a worker container killed mid-ladder.

One stack serves the module (session fixture); the test that kills a worker runs last.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable

import pytest
import yaml
from arena.clients.sdk import ArenaClient
from arena.services.common.server import check_health

from arena import errors
from arena.games import Color, new_position, position_from_text
from arena.v1 import bots_pb2, common_pb2, ladder_pb2, match_pb2
from tests.deploy.conftest import DEPLOY, WORKERS, ComposeStack, Engine, run

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

SERVICE_NAMES = {
    "registry": "arena.v1.BotRegistry",
    "ladder": "arena.v1.Ladder",
    "referee": "arena.v1.Referee",
    "worker": "arena.v1.Engine",
    "analyst": "arena.v1.Engine",
}


def containers(stack: ComposeStack) -> list[dict[str, object]]:
    text = stack.compose("ps", "--format", "json").stdout.strip()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def manifest(stack: ComposeStack) -> dict[str, str]:
    data = json.loads((stack.home / "stack.json").read_text())
    services: dict[str, str] = data["services"]
    return services


def wait_for(condition: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out after {timeout_s:.0f} s waiting for {what}"
        time.sleep(0.5)


def test_every_service_runs_healthy_with_three_workers(compose_stack: ComposeStack) -> None:
    found = containers(compose_stack)
    count = {service: sum(c["Service"] == service for c in found)
             for service in ("redis", "cache", "registry", "ladder", "referee", "worker", "analyst",
                             "web")}
    assert count == {"redis": 1, "cache": 1, "registry": 1, "ladder": 1, "referee": 2,
                     "worker": WORKERS, "analyst": 1, "web": 1}
    unhealthy = [c["Name"] for c in found if c["State"] != "running" or c["Health"] != "healthy"]
    assert not unhealthy


def test_each_role_answers_grpc_health_from_the_host(compose_stack: ComposeStack) -> None:
    services = manifest(compose_stack)
    assert sorted(services) == sorted(
        ["registry", "ladder", "referee", "analyst",
         *(f"worker-{i}" for i in range(1, WORKERS + 1))])
    for name, target in services.items():
        role = name.split("-")[0]
        assert check_health(target), f"{name} at {target} is not SERVING"
        assert check_health(target, service=SERVICE_NAMES[role]), f"{name}: {SERVICE_NAMES[role]}"


def test_services_run_unprivileged(compose_stack: ComposeStack) -> None:
    for service in ("redis", "cache", "registry", "ladder", "referee", "worker", "web"):
        uid = compose_stack.compose("exec", "-T", service, "id", "-u").stdout.strip()
        assert uid == "10001", f"{service} runs as uid {uid}"


def test_the_web_pages_and_their_api_answer_from_the_host(compose_stack: ComposeStack) -> None:
    """The web gateway reaches the services through their gRPC APIs inside the network."""
    import urllib.request

    published = compose_stack.compose("port", "web", "8080").stdout.strip()
    base = "http://" + published.replace("0.0.0.0", "127.0.0.1")
    with urllib.request.urlopen(f"{base}/healthz", timeout=10) as reply:
        assert json.loads(reply.read()) == {"status": "serving"}
    with urllib.request.urlopen(f"{base}/api/bots", timeout=10) as reply:
        assert "bots" in json.loads(reply.read())  # read through the registry's gRPC API
    with urllib.request.urlopen(f"{base}/ladders", timeout=10) as reply:
        assert reply.headers["x-frame-options"] == "DENY" and b"app.js" in reply.read()


def redis_cli(stack: ComposeStack, service: str, *command: str, admin: bool = True) -> str:
    """redis-cli in the ``service`` container, as the admin user (or as nobody)."""
    login = ["-e", f"REDISCLI_AUTH={stack.redis_admin_password()}"] if admin else []
    user = ["--user", "admin"] if admin else []
    return stack.compose("exec", "-T", *login, service, "redis-cli", *user, *command).stdout


def redis_setting(stack: ComposeStack, service: str, name: str) -> str:
    reply = redis_cli(stack, service, "config", "get", name)
    lines = reply.splitlines()  # the name, then the value (possibly an empty line)
    assert lines[0] == name, reply
    return lines[1] if len(lines) > 1 else ""


def test_durable_redis_keeps_an_append_only_file_on_its_volume(
        compose_stack: ComposeStack, docker_engine: Engine) -> None:
    assert redis_setting(compose_stack, "redis", "appendonly") == "yes"
    assert redis_setting(compose_stack, "redis", "appendfsync") == "everysec"
    assert redis_setting(compose_stack, "redis", "dir") == "/data"
    redis_id = next(c["ID"] for c in containers(compose_stack) if c["Service"] == "redis")
    mounts = json.loads(docker_engine.docker("inspect", "-f", "{{json .Mounts}}",
                                             str(redis_id)).stdout)
    volume = [m for m in mounts if m["Destination"] == "/data"]
    assert volume and volume[0]["Type"] == "volume"
    assert volume[0]["Name"] == f"{compose_stack.project}_redis-data"


def test_cache_redis_evicts_lru_and_persists_nothing(compose_stack: ComposeStack) -> None:
    assert redis_setting(compose_stack, "cache", "maxmemory-policy") == "allkeys-lru"
    assert redis_setting(compose_stack, "cache", "maxmemory") == str(64 * 1024 * 1024)
    assert redis_setting(compose_stack, "cache", "appendonly") == "no"
    assert redis_setting(compose_stack, "cache", "save") == ""


def test_redis_admits_only_its_users(compose_stack: ComposeStack) -> None:
    """Without a user only PING; the services' data is there, written by their users."""
    for service in ("redis", "cache"):
        assert redis_cli(compose_stack, service, "ping", admin=False).strip() == "PONG"
        refused = redis_cli(compose_stack, service, "get", "arena:bots", admin=False)
        assert "NOPERM" in refused, refused
    users = redis_cli(compose_stack, "redis", "acl", "users").split()
    assert sorted(users) == ["admin", "default", "ladder", "referee", "registry", "worker"]
    assert sorted(redis_cli(compose_stack, "cache", "acl", "users").split()) == [
        "admin", "default", "referee", "worker"]


def test_admin_token_comes_from_the_secret_file(compose_stack: ComposeStack) -> None:
    services = manifest(compose_stack)
    with ArenaClient(registry=services["registry"], token="not-the-token",
                     home=compose_stack.home) as stranger, pytest.raises(
                         errors.UnauthenticatedError):
        stranger.list_presets()
    with ArenaClient(home=compose_stack.home) as admin:  # token file named by stack.json
        assert admin.addresses.token == compose_stack.token
        assert admin.list_presets(), "the registry lists no presets"


def test_arena_cli_on_the_host_drives_the_stack(compose_stack: ComposeStack) -> None:
    import sys

    listed = run([sys.executable, "-m", "arena.clients", "--home", str(compose_stack.home),
                  "bot", "list"], 120, "arena bot list against the compose stack")
    assert listed.returncode == 0


def test_scale_adds_workers_and_removes_them_again(compose_stack: ComposeStack) -> None:
    def healthy_workers() -> int:
        return sum(c["Service"] == "worker" and c["Health"] == "healthy"
                   for c in containers(compose_stack))

    compose_stack.compose("up", "-d", "--wait", "--no-recreate", "--scale",
                          f"worker={WORKERS + 1}", timeout_s=300)
    assert healthy_workers() == WORKERS + 1
    compose_stack.compose("up", "-d", "--wait", "--no-recreate", "--scale",
                          f"worker={WORKERS}", timeout_s=300)
    assert healthy_workers() == WORKERS


def test_unreadable_token_file_stops_the_service_with_a_reason(
        arena_image: str, docker_engine: Engine) -> None:
    result = subprocess.run(
        ["docker", "run", "--rm", "--network", "none", "-e",
         "ARENA_ADMIN_TOKEN_FILE=/run/secrets/missing", arena_image, "registry"],
        capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 64
    assert "cannot read ARENA_ADMIN_TOKEN_FILE=/run/secrets/missing" in result.stderr

def test_the_retention_cronjob_prunes_from_the_image(compose_stack: ComposeStack) -> None:
    """The command of deploy/k8s-components/retention, run as Kubernetes would run it: the
    image's entrypoint, the shared settings (ARENA_REFEREE), the admin token as ARENA_TOKEN."""
    cronjob = yaml.safe_load((DEPLOY / "k8s-components" / "retention" / "prune.yaml").read_text())
    (container,) = cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
    (token,) = [e["name"] for e in container["env"]
                if e["valueFrom"]["secretKeyRef"]["name"] == "arena-admin-token"]
    result = compose_stack.compose(
        "run", "--rm", "--no-deps", "-T", "-e", f"{token}={compose_stack.token}",
        "referee", *container["args"], timeout_s=180)
    assert result.stdout.startswith("forgot 0 of the "), result.stdout
    assert "matches recorded before" in result.stdout


# -- the ladder (runs last: it kills a worker) ------------------------------------------

OTHELLO = common_pb2.GAME_KIND_OTHELLO
# Bots that search until their move time runs out, so that games last long enough to be
# interrupted (the depth-limited presets finish a game in well under a second).
BOTS = {"strong": "arena-strong", "fast": "arena-fast", "lab": "lab-advanced"}
KILL_AFTER_PLIES = 6
GAMES_PER_PAIRING = 2
GAMES_TOTAL = GAMES_PER_PAIRING * len(BOTS) * (len(BOTS) - 1) // 2
PROTO_COLOR = {Color.BLACK: common_pb2.COLOR_BLACK, Color.WHITE: common_pb2.COLOR_WHITE,
               None: common_pb2.COLOR_UNSPECIFIED}


def check_legal(match: match_pb2.Match) -> None:
    """Replay the match with the rules library: the opening leads to the recorded start,
    every recorded move (passes included) is legal for the side to move, and the final
    position's outcome is the recorded result."""
    config = match.config
    position = (position_from_text("othello", config.start_position) if config.start_position
                else new_position("othello", config.game.variant or None))
    for square in config.opening:
        position.push(square)
    assert position.to_text() == match.start_position, match.id
    for record in match.moves:
        assert record.color == PROTO_COLOR[position.turn], f"{match.id} ply {record.ply}"
        assert position.is_legal(record.move.square), (
            f"{match.id} ply {record.ply}: {record.move.text} is illegal in {position.to_text()}")
        position.push(record.move.square)
        if record.position_after:
            assert record.position_after == position.to_text(), f"{match.id} ply {record.ply}"
    outcome = position.outcome()
    assert outcome is not None, f"{match.id} ended before the game was over"
    assert match.result.winner == PROTO_COLOR[outcome.winner], match.id
    assert (match.result.black_count, match.result.white_count) == (
        outcome.black_score, outcome.white_score), match.id


def worker_containers(stack: ComposeStack, engine: Engine) -> dict[str, str]:
    """Container hostname (the worker's consumer name is worker-<hostname>-<pid>) -> id."""
    ids = [str(c["ID"]) for c in containers(stack) if c["Service"] == "worker"]
    return {engine.docker("inspect", "-f", "{{.Config.Hostname}}", cid).stdout.strip(): cid
            for cid in ids}


def running_with_moves(arena: ArenaClient, ladder_id: str) -> list[match_pb2.Match]:
    ids = arena.get_standings(ladder_id).ladder.match_ids
    matches = [arena.get_match(match_id) for match_id in ids]
    return [m for m in matches if m.status == match_pb2.MATCH_STATUS_RUNNING and m.moves]


def test_ladder_through_the_sdk_survives_a_killed_worker(
        compose_stack: ComposeStack, docker_engine: Engine) -> None:
    with ArenaClient(home=compose_stack.home, timeout_s=30) as arena:
        for name, preset in BOTS.items():
            arena.register_bot(bots_pb2.BotSpec(name=name, game=OTHELLO), from_preset=preset)
        info = arena.create_ladder(ladder_pb2.LadderConfig(
            name="deploy-test", game=common_pb2.GameSpec(kind=OTHELLO),
            bots=[common_pb2.BotRef(name=name) for name in BOTS],
            format=ladder_pb2.LADDER_FORMAT_ROUND_ROBIN, games_per_pairing=GAMES_PER_PAIRING,
            opening_suite="othello-balanced", seed=7,
            # Short moves, generous grace: two shared cores, lateness is not under test here.
            time_control=common_pb2.TimeControl(move_time_ms=150, grace_ms=2000),
        ))
        assert info.games_total == GAMES_TOTAL

        # Mid-ladder: games are under way. Kill (SIGKILL) the worker container that made the
        # latest move of a game in progress, so it very likely holds a job.
        started = time.monotonic()
        running: list[match_pb2.Match] = []

        def mid_ladder() -> bool:
            nonlocal running
            done = arena.get_standings(info.id).ladder.games_done
            assert done < GAMES_TOTAL, "the ladder finished before a worker could be killed"
            running = [m for m in running_with_moves(arena, info.id)
                       if len(m.moves) >= KILL_AFTER_PLIES]
            return bool(running)

        wait_for(mid_ladder, 600, "a game in progress")
        hosts = worker_containers(compose_stack, docker_engine)
        victim_id = running[0].moves[-1].worker_id
        victim_host = next((h for h in hosts if victim_id.startswith(f"worker-{h}-")), None)
        assert victim_host is not None, f"move by {victim_id}, workers are {sorted(hosts)}"
        docker_engine.docker("kill", hosts[victim_host])
        plies_at_kill = {m.id: len(m.moves) for m in running_with_moves(arena, info.id)}
        done_at_kill = arena.get_standings(info.id).ladder.games_done
        print(f"\nkilled worker {victim_id} after {time.monotonic() - started:.0f} s with "
              f"{done_at_kill}/{GAMES_TOTAL} games done and {len(plies_at_kill)} in progress")

        wait_for(lambda: arena.get_standings(info.id).ladder.status
                 == ladder_pb2.LADDER_STATUS_FINISHED, 900, "the ladder to finish")
        logs = compose_stack.compose("logs", "--no-color", "worker").stdout
        print(f"ladder finished in {time.monotonic() - started:.0f} s; surviving workers took "
              f"over {logs.count('took over move job')} pending move job(s)")
        standings = arena.get_standings(info.id)
        matches = [arena.get_match(match_id) for match_id in standings.ladder.match_ids]

    ladder = standings.ladder
    assert (ladder.games_done, ladder.games_total, ladder.games_void) == (
        GAMES_TOTAL, GAMES_TOTAL, 0)
    assert len(set(ladder.match_ids)) == len(ladder.match_ids) == GAMES_TOTAL
    for match in matches:
        assert match.status == match_pb2.MATCH_STATUS_FINISHED, match.id
        assert match.result.termination == match_pb2.TERMINATION_NORMAL, (match.id, match.result)
        check_legal(match)
    for match_id, plies in plies_at_kill.items():  # games cut by the kill went on elsewhere
        finished = next(m for m in matches if m.id == match_id)
        assert len(finished.moves) > plies, match_id
    assert any(r.worker_id == victim_id for m in matches for r in m.moves)
    assert len({r.worker_id for m in matches for r in m.moves}) >= 2

    # Counted once: each result appears exactly once in the standings.
    record = {name: [0, 0, 0] for name in BOTS}  # wins, draws, losses per the referee
    for match in matches:
        winner = match.result.winner
        black, white = match.black.name, match.white.name
        if winner == common_pb2.COLOR_UNSPECIFIED:
            record[black][1] += 1
            record[white][1] += 1
        else:
            won, lost = (black, white) if winner == common_pb2.COLOR_BLACK else (white, black)
            record[won][0] += 1
            record[lost][2] += 1
    rows = {row.bot.name: row for row in standings.rows}
    assert sorted(rows) == sorted(BOTS)
    for name, (wins, draws, losses) in record.items():
        row = rows[name]
        assert (row.wins, row.draws, row.losses) == (wins, draws, losses), name
        assert row.games == wins + draws + losses == GAMES_PER_PAIRING * (len(BOTS) - 1)

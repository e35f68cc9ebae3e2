"""What a user's matches may store: the ``match_bytes`` quota, through a real stack.

A user's played matches had no bound in bytes: at their ``running_matches`` pace, a user with
quick bots could add tens of megabytes an hour to the durable Redis for as long as they
liked. Every match a user owns, played or imported, now counts (its header, move records
and events, as the referee writes them); past the quota a new match is refused, and
deleting or pruning matches gives their bytes back. Real processes (`arena up`'s launcher),
the `arena` command as each user runs it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from arena.clients.sdk import ArenaClient
from arena.services.common.launcher import Launcher
from arena.services.common.protocol import keys

from arena import errors
from arena.engine.othello import PRESETS
from arena.v1 import match_pb2
from tests.support.bots import builtin_bot, match_config
from tests.support.stacks import arena_command, launcher, stack_client

pytestmark = pytest.mark.slow
TOKENS = {"alice-token": {"name": "alice", "role": "user"},
          "bob-token": {"name": "bob", "role": "user"}}
# About three quick Othello games (a game of these bots stores about 17 KB).
LIMIT = 40_000
FINISHED = (match_pb2.MATCH_STATUS_FINISHED, match_pb2.MATCH_STATUS_CANCELLED)


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[Launcher]:
    """The ladder service checks its running ladders only at its start (then every 10
    minutes; the default is 30 s): what moves a waiting ladder on here is what its owner
    does, a match ending or matches deleted, never that check."""
    env = {"ARENA_TOKENS": json.dumps(TOKENS), "ARENA_WARM_GAMES": "othello",
           "ARENA_QUOTAS": json.dumps({"user": {"match_bytes": LIMIT}}),
           "ARENA_LADDER_RECONCILE_S": "600"}
    with launcher(home=tmp_path / "arena", workers=1, env=env) as running:
        running.write_manifest()
        with stack_client(running, running.admin_token) as admin:
            for name in ("quick-a", "quick-b"):
                builtin_bot(admin, name, dict(PRESETS["lab-beginner"]))
        yield running


def _played(sdk: ArenaClient) -> match_pb2.Match:
    """A quick match of the caller's, played to its end."""
    match = sdk.create_match(match_config("quick-a", "quick-b"))
    deadline = time.monotonic() + 60
    while (match := sdk.get_match(match.id)).status not in FINISHED:
        assert time.monotonic() < deadline, f"match {match.id} did not end"
        time.sleep(0.1)
    assert match.status == match_pb2.MATCH_STATUS_FINISHED, match.result
    return match


def _stored(client: redis.Redis, match_id: str) -> int:
    """What the match takes in the durable Redis: header, move records, event payloads."""
    header: bytes = client.get(keys.match(match_id)) or b""
    moves: list[bytes] = client.lrange(keys.match(match_id, "moves"), 0, -1)
    events = client.xrange(keys.match(match_id, "events"))
    return len(header) + sum(map(len, moves)) + sum(len(fields[b"pb"]) for _, fields in events)


def _counted(client: redis.Redis, owner: str) -> int:
    return int(client.get(keys.owner_match_bytes(owner)) or 0)


def test_a_users_matches_are_bounded_in_bytes_and_deleting_gives_them_back(
        stack: Launcher) -> None:
    client = redis.Redis.from_url(stack.redis_url)
    with stack_client(stack, "alice-token") as alice, stack_client(stack, "bob-token") as bob:
        # alice plays until her next match is refused; every byte is counted as written.
        kept: list[match_pb2.Match] = []
        with pytest.raises(errors.ResourceExhaustedError) as refused:
            while len(kept) < 20:
                kept.append(_played(alice))
        sizes = [_stored(client, match.id) for match in kept]
        print(f"stored per game: {sizes}")
        assert 2 <= len(kept) < 20
        assert _counted(client, "alice") == sum(sizes) > LIMIT - max(sizes)
        for match, size in zip(kept, sizes, strict=True):
            assert int(client.get(keys.match(match.id, "bytes")) or 0) == size
        assert "quota match_bytes is 40,000: alice's matches take" in str(refused.value)
        listed = [m.id for m in alice.iter_matches(summary_only=True)]
        assert sorted(listed) == sorted(m.id for m in kept)  # nothing of the refused one

        # Through the command: one line, the quota and the way out, exit 1.
        said = arena_command(stack, "match", "create", "--black", "quick-a",
                      "--white", "quick-b", token="alice-token")
        assert said.returncode == 1 and "Traceback" not in said.stderr, said.stderr
        (line,) = said.stderr.strip().splitlines()
        assert line.startswith("arena: error: quota match_bytes is 40,000: alice's matches "
                               f"take {sum(sizes):,} bytes and this one "), line
        assert "`arena match delete` or `arena match prune`" in line

        # `arena match usage` says the same figures (alice's own; bob may not read hers).
        usage = arena_command(stack, "match", "usage", token="alice-token")
        assert usage.returncode == 0, usage.stderr
        assert usage.stdout.splitlines() == [
            "alice's matches",
            f"  stored bytes   {sum(sizes):,} of 40,000 (match_bytes)",
            "  unfinished     0 of 200 (queued_matches)",
            "  running        0 of 4 (running_matches)"], usage.stdout
        as_json = arena_command(stack, "match", "usage", "--json", token="alice-token")
        assert json.loads(as_json.stdout)["match_bytes"] == str(sum(sizes))  # int64: a string
        denied = arena_command(stack, "match", "usage", "--user", "alice", token="bob-token")
        assert denied.returncode == 1 and "bob may not read the usage of 'alice'" in (
            denied.stderr), denied.stderr
        admin = arena_command(stack, "match", "usage", "--user", "alice", token=stack.admin_token)
        assert f"stored bytes   {sum(sizes):,} of 40,000" in admin.stdout, admin.stderr
        for absurd in ("a" * 100_000, "al\x1b[2Jice"):
            refused = arena_command(stack, "match", "usage", "--user", absurd,
                                    token=stack.admin_token)
            assert refused.returncode == 1 and len(refused.stderr) < 1_500, refused.stderr
            assert "user: a user's name: at most 200 printable characters" in refused.stderr
            assert "\x1b" not in refused.stderr

        # bob is not held by alice's bytes.
        theirs = _played(bob)
        assert _counted(client, "bob") == _stored(client, theirs.id)

        # Deleting gives a match's bytes back, once; then alice may play again.
        done = arena_command(stack, "match", "delete", kept[0].id, token="alice-token")
        assert done.returncode == 0, done.stderr
        assert _counted(client, "alice") == sum(sizes[1:])
        again_deleted = arena_command(stack, "match", "delete", kept[0].id, token="alice-token")
        assert again_deleted.returncode == 1
        assert _counted(client, "alice") == sum(sizes[1:])
        again = _played(alice)
        assert _counted(client, "alice") == sum(sizes[1:]) + _stored(client, again.id)

        # alice prunes her own matches (every one of them here), not bob's.
        pruned = arena_command(stack, "match", "prune", "--older-than", "0m", "--json",
                               token="alice-token")
        assert pruned.returncode == 0, pruned.stderr
        assert json.loads(pruned.stdout)["pruned"] == len(kept)
        assert _counted(client, "alice") == 0
        assert bob.get_match(theirs.id).id == theirs.id
        assert _counted(client, "bob") == _stored(client, theirs.id)
        _played(alice)
    client.close()


def test_a_ladder_waits_on_its_owners_match_bytes_and_says_so(stack: Launcher) -> None:
    """A ladder's games are its owner's matches: past the quota its next game waits, the
    ladder says why, and it goes on once its owner makes room."""
    client = redis.Redis.from_url(stack.redis_url)
    made = arena_command(stack, "ladder", "create", "quick-a", "quick-b",
                  "--games-per-pairing", "12", "--json", token="alice-token")
    assert made.returncode == 0, made.stderr
    ladder_id = json.loads(made.stdout)["id"]

    def standings() -> str:
        shown = arena_command(stack, "ladder", "standings", ladder_id, token="alice-token")
        assert shown.returncode == 0, shown.stderr
        return shown.stdout

    deadline = time.monotonic() + 120
    while "waiting: quota match_bytes is 40,000: alice's matches take" not in (
            said := standings()):
        assert time.monotonic() < deadline, said
        time.sleep(0.5)
    assert _counted(client, "alice") > LIMIT - 20_000
    # `arena status` names it among the running ladders too.
    status = arena_command(stack, "status", "--json", token="alice-token")
    (listed,) = [row for row in json.loads(status.stdout)["ladders"] if row["id"] == ladder_id]
    assert listed["waiting"].startswith("quota match_bytes is 40,000"), listed
    shown = arena_command(stack, "status", token="alice-token").stdout
    assert f"{ladder_id} " in shown and "; waiting: quota match_bytes is 40,000" in shown, shown
    # Its games made while there was room and not started are void and played again.
    ladder = json.loads(arena_command(stack, "ladder", "standings", ladder_id,
                               "--json", token="alice-token").stdout)["ladder"]
    assert ladder["games_void"] >= 1 and ladder["games_done"] < ladder["games_total"], ladder
    # alice makes room (a ladder's games go together, once all are over: delete them one
    # by one); the ladder creates its next games by itself and goes on.
    progress = keys.ladder(ladder_id, "progress")
    (last,) = client.xrevrange(progress, count=1)
    with stack_client(stack, "alice-token") as alice:
        for match in alice.iter_matches(summary_only=True):
            if match.status in FINISHED:
                alice.delete_match(match.id)
    # The ladder's progress says when it stops waiting (its next game is created): the
    # deletions tell the ladder service at once, well before its next check of every ladder.
    deadline = time.monotonic() + 60
    while not any(fields.get(b"waiting") == b"" for _, fields in
                  client.xrange(progress, min=f"({last[0].decode()}")):
        assert time.monotonic() < deadline, standings()
        time.sleep(0.2)
    cancelled = arena_command(stack, "ladder", "cancel", ladder_id, token="alice-token")
    assert cancelled.returncode == 0, cancelled.stderr
    client.close()


def test_matches_made_while_there_was_room_are_cancelled_at_their_start_saying_why(
        stack: Launcher) -> None:
    """Creation is checked against what is stored, and a match stores its moves only as it
    plays: eight matches made at once all fit. Those that would start once the owner's
    matches take the quota are cancelled then, saying why (parked, they would wait for a
    deletion in silence); those started play to their end."""
    client = redis.Redis.from_url(stack.redis_url)
    with stack_client(stack, "alice-token") as alice:
        made = [alice.create_match(match_config("quick-a", "quick-b")) for _ in range(8)]
        deadline = time.monotonic() + 120
        while any((ended := [alice.get_match(m.id) for m in made])[i].status not in FINISHED
                  for i in range(len(made))):
            assert time.monotonic() < deadline, [m.status for m in ended]
            time.sleep(0.2)
    played = [m for m in ended if m.status == match_pb2.MATCH_STATUS_FINISHED]
    refused = [m for m in ended if m.status == match_pb2.MATCH_STATUS_CANCELLED]
    assert played and refused, [m.result.detail for m in ended]
    for match in refused:
        assert match.result.termination == match_pb2.TERMINATION_NOT_STARTED
        assert match.result.void
        assert match.result.detail.startswith(
            "not started: quota match_bytes is 40,000 and alice's matches take "), match
        assert not match.moves
    # Every match that started was one its owner had room for: at most the ones running
    # at once (running_matches, 4) passed the quota.
    sizes = sorted(_stored(client, m.id) for m in played)
    assert _counted(client, "alice") == sum(_stored(client, m.id) for m in ended)
    assert sum(sizes[:-4]) < LIMIT
    shown = arena_command(stack, "match", "show", refused[0].id, token="alice-token")
    assert "not started: quota match_bytes is 40,000" in shown.stdout, shown.stdout
    client.close()

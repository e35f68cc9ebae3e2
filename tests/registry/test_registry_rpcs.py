"""Each BotRegistry RPC's happy path against a real server and Redis."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import grpc
import pytest
import redis
from arena.services.common.config import Config
from arena.services.common.embedded_redis import EmbeddedRedis
from arena.services.common.protocol import keys
from arena.services.common.protocol.bots import BotStore

from arena.bots import builtin_config, new_version
from arena.engine import gomoku, othello
from arena.v1 import bots_pb2, common_pb2, registry_pb2, registry_pb2_grpc
from tests.registry.conftest import (
    TOOL_PNG,
    Registry,
    external_spec,
    gomoku_spec,
    othello_spec,
    png_bytes,
)
from tests.support.servers import ADMIN_TOKEN, serve


def _get(registry: Registry, name: str, version: int = 0) -> bots_pb2.BotVersion:
    reply = registry.call("GetBot", registry_pb2.GetBotRequest(
        bot=common_pb2.BotRef(name=name, version=version)))
    assert isinstance(reply, bots_pb2.BotVersion)
    return reply


def _update(registry: Registry, spec: bots_pb2.BotSpec, token: str = "alice-token"
            ) -> bots_pb2.BotVersion:
    reply = registry.call("UpdateBot", registry_pb2.UpdateBotRequest(name=spec.name, spec=spec),
                          token)
    assert isinstance(reply, bots_pb2.BotVersion)
    return reply


def _list(registry: Registry, **fields: object) -> registry_pb2.ListBotsResponse:
    reply = registry.call("ListBots", registry_pb2.ListBotsRequest(**fields))  # type: ignore[arg-type]
    assert isinstance(reply, registry_pb2.ListBotsResponse)
    return reply


def test_register_returns_version_one_owned_by_the_caller(registry: Registry) -> None:
    spec = othello_spec("lucy-2")
    spec.avatar_png = TOOL_PNG
    bot = registry.register(spec)
    assert bot.version == 1
    assert bot.owner == "alice"
    assert bot.spec == spec
    assert len(bot.content_hash) == 64 and len(bot.evaluator_hash) == 64
    assert bot.evaluator_hash == othello.evaluator_hash(builtin_config(spec))
    assert bot.created_at.seconds > 0
    assert not bot.retired


def test_struct_numbers_come_back_as_integers(registry: Registry) -> None:
    registry.register(othello_spec("ints", stable_disc_score=20))
    config = builtin_config(_get(registry, "ints").spec)
    assert config["stable_disc_score"] == 20 and isinstance(config["stable_disc_score"], int)
    assert config["depth"] == {"begin": 3, "middle": 3, "end": 4}


def test_register_gomoku_and_external_bots(registry: Registry) -> None:
    moku = registry.register(gomoku_spec("moku", depth=4))
    assert moku.evaluator_hash == gomoku.evaluator_hash({"evaluator": "sharpmoku", "depth": 4})
    # A public address (a name would need DNS, which the tests do not rely on).
    remote = registry.register(external_spec("remote", "192.0.43.10:7000"))
    assert remote.spec.external.address == "192.0.43.10:7000"
    # One spelling is stored: a worker keeps a connection per address, and an owner's
    # 120 spellings of one port held 120 of each worker's connections.
    zeros = registry.register(external_spec("zeros", "192.0.43.10:0007000"))
    assert zeros.spec.external.address == "192.0.43.10:7000"
    assert remote.spec.external.move_deadline_ms == 2000


def test_register_from_preset_merges_overrides(registry: Registry) -> None:
    spec = bots_pb2.BotSpec(name="terra-deep")
    spec.builtin.config.update({"depth": {"end": 8}})
    bot = registry.register(spec, from_preset="terra")
    config = builtin_config(bot.spec)
    expected = dict(othello.PRESETS["terra"])
    expected["depth"] = {"begin": 6, "middle": 6, "end": 8}
    assert config == expected
    assert bot.spec.game == common_pb2.GAME_KIND_OTHELLO
    assert bot.spec.preset == "terra"


def test_register_from_preset_without_overrides_is_the_preset(registry: Registry) -> None:
    bot = registry.register(bots_pb2.BotSpec(name="normal"), from_preset="sharpmoku-normal")
    assert builtin_config(bot.spec) == gomoku.PRESETS["sharpmoku-normal"]
    assert bot.spec.game == common_pb2.GAME_KIND_GOMOKU


def test_get_latest_and_each_version(registry: Registry) -> None:
    first = registry.register(othello_spec("evolving"))
    second = _update(registry, othello_spec("evolving", stable_disc_score=30))
    assert second.version == 2 and second.owner == "alice"
    assert _get(registry, "evolving") == second
    assert _get(registry, "evolving", 1) == first
    assert _get(registry, "evolving", 2) == second


def test_get_unknown_bot_or_version_is_not_found(registry: Registry) -> None:
    registry.register(othello_spec("known"))
    for name, version in (("unknown", 0), ("known", 2)):
        with pytest.raises(grpc.RpcError) as caught:
            _get(registry, name, version)
        assert caught.value.code() == grpc.StatusCode.NOT_FOUND


def test_versions_are_immutable(registry: Registry, redis_client: redis.Redis) -> None:
    registry.register(othello_spec("fixed"))
    stored_v1 = redis_client.get("arena:bot:fixed:v:1")
    v1 = _get(registry, "fixed", 1)
    for depth in (5, 6, 7):
        _update(registry, othello_spec("fixed", depth={"begin": depth, "middle": 3, "end": 4}))
    assert redis_client.get("arena:bot:fixed:v:1") == stored_v1
    assert _get(registry, "fixed", 1) == v1
    assert _get(registry, "fixed").version == 4
    hashes = {_get(registry, "fixed", v).content_hash for v in range(1, 5)}
    assert len(hashes) == 4


def test_same_content_hashes_alike_and_evaluator_hash_ignores_cosmetics(
    registry: Registry,
) -> None:
    first = registry.register(othello_spec("twin"))
    again = _update(registry, othello_spec("twin"))
    assert again.content_hash == first.content_hash
    cosmetic = othello_spec("twin")
    cosmetic.description = "new words"
    cosmetic.avatar_png = png_bytes()
    changed = _update(registry, cosmetic)
    assert changed.content_hash != first.content_hash
    assert changed.evaluator_hash == first.evaluator_hash


def test_update_may_omit_the_name_and_game(registry: Registry) -> None:
    registry.register(gomoku_spec("moku"))
    spec = gomoku_spec("", depth=3)
    spec.game = common_pb2.GAME_KIND_UNSPECIFIED
    reply = registry.call("UpdateBot", registry_pb2.UpdateBotRequest(name="moku", spec=spec))
    assert isinstance(reply, bots_pb2.BotVersion)
    assert reply.spec.name == "moku" and reply.spec.game == common_pb2.GAME_KIND_GOMOKU
    assert builtin_config(reply.spec)["depth"] == 3


def test_retire_keeps_history_and_stops_updates(registry: Registry) -> None:
    registry.register(othello_spec("old"))
    _update(registry, othello_spec("old", stable_disc_score=0))
    retired = registry.call("RetireBot", registry_pb2.RetireBotRequest(name="old"))
    assert isinstance(retired, bots_pb2.BotVersion)
    assert retired.retired and retired.version == 2
    assert _get(registry, "old", 1).retired and _get(registry, "old", 1).version == 1
    with pytest.raises(grpc.RpcError) as caught:
        _update(registry, othello_spec("old"))
    assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "retired" in str(caught.value.details())
    assert "register the new one under another name" in str(caught.value.details())
    again = registry.call("RetireBot", registry_pb2.RetireBotRequest(name="old"))
    assert isinstance(again, bots_pb2.BotVersion) and again.retired


def test_retired_name_stays_taken(registry: Registry) -> None:
    registry.register(othello_spec("gone"))
    registry.call("RetireBot", registry_pb2.RetireBotRequest(name="gone"))
    with pytest.raises(grpc.RpcError) as caught:
        registry.register(othello_spec("gone"))
    assert caught.value.code() == grpc.StatusCode.ALREADY_EXISTS
    # its owner, trying the name again, learns why it is still taken
    assert "owned by alice and retired" in str(caught.value.details()), caught.value.details()


def test_a_retried_registration_returns_the_version_it_registered(
        registry: Registry) -> None:
    """RegisterBot's request_id was not read: a retry after a timeout was refused as a
    name taken (by the caller's own first call). (A name may start with '!' and hold
    spaces, as the store script's refusals and its records do.)"""
    first = registry.register(othello_spec("!taken again"), request_id="reg-1")
    assert registry.register(othello_spec("!taken again"), request_id="reg-1") == first
    with pytest.raises(grpc.RpcError) as caught:
        registry.register(othello_spec("!taken again"), request_id="reg-2")
    assert caught.value.code() == grpc.StatusCode.ALREADY_EXISTS
    assert "already exists" in str(caught.value.details())


def test_a_key_used_again_for_another_bot_is_refused_and_registers_nothing(
        registry: Registry) -> None:
    """A request_id names one registration: used again for another bot (or the same name
    with another config) it is refused, naming the bot it registered."""
    registry.register(othello_spec("first"), request_id="reg-1")
    for spec in (othello_spec("second"), othello_spec("first", stable_disc_score=20)):
        with pytest.raises(grpc.RpcError) as caught:
            registry.register(spec, request_id="reg-1")
        assert caught.value.code() == grpc.StatusCode.ALREADY_EXISTS
        assert caught.value.details() == ("request_id 'reg-1' already registered bot first "
                                          "with different settings; use a new request_id")
    assert [bot.spec.name for bot in _list(registry).bots] == ["first"]
    assert registry.register(othello_spec("second"), "bob-token", request_id="reg-1").owner \
        == "bob"  # keys are per owner


@pytest.mark.parametrize("lookalike", ["Lucy-X", "LUCY-x", "\uff4c\uff55\uff43\uff59-x",
                                       "lucy\u2010x", "lucy\u2212x"],
                         ids=["capital", "upper", "full-width", "hyphen", "minus"])
def test_a_name_that_reads_as_another_bot_s_is_taken(
        registry: Registry, lookalike: str, redis_server: EmbeddedRedis,
        redis_client: redis.Redis) -> None:
    """Bob registered 'Lucy-x' (or full-width 'ｌｕｃｙ-x') beside alice's 'lucy-x', and
    listings, ladders and rating lists showed two bots no reader could tell apart."""
    registry.register(othello_spec("lucy-x"))
    with pytest.raises(grpc.RpcError) as caught:
        registry.register(othello_spec(lookalike), token="bob-token")
    assert caught.value.code() == grpc.StatusCode.ALREADY_EXISTS
    assert caught.value.details() == (
        f"the bot name {lookalike!r} reads as 'lucy-x', owned by alice: names that differ "
        "only in case, in the width of their characters or in their dashes are one name; "
        "choose another")
    # A bot registered before names were folded is found all the same.
    redis_client.delete(keys.BOT_NAME_FOLDS)
    restarted = serve("registry", Config(redis_url=redis_server.url))
    channel = grpc.insecure_channel(restarted.target)
    try:
        again = Registry(restarted.handle, channel, registry_pb2_grpc.BotRegistryStub(channel))
        with pytest.raises(grpc.RpcError) as refused:
            again.register(othello_spec(lookalike), token="bob-token")
        assert refused.value.code() == grpc.StatusCode.ALREADY_EXISTS
        assert "reads as 'lucy-x', owned by alice" in (refused.value.details() or "")
    finally:
        channel.close()
        restarted.stop()


@pytest.mark.parametrize(("name", "problem"), [
    ("\u0430rena-x", "must not mix Latin and Cyrillic letters"),  # a Cyrillic a
    ("lucy-\u03bf", "must not mix Latin and Greek letters"),  # a Greek omicron
    ("\u3164", "must not be blank"),  # a Hangul filler, a letter that shows as nothing
    ("\u3164\u3164", "must not be blank"),
    ("lucy-x\u3164", "must not start or end with a space"),
    # Each showed as another's name: 'al-fa\u034fst' beside alice's al-fast.
    ("al-fa\u034fst", "must not hold U+034F, a character that shows as nothing"),
    ("al-fa\ufe0fst", "must not hold U+FE0F"),
    ("al-fa\u180bst", "must not hold U+180B"),
    ("al-fa\U000e0100st", "must not hold U+E0100"),
    ("al-fa\u17b4st", "must not hold U+17B4"),
    ("al\u3164fast", "must not hold U+3164"),
    ("al\u2800fast", "must not hold U+2800"),
], ids=["cyrillic-a", "greek-o", "filler", "fillers", "filler-after", "grapheme-joiner",
        "variation-selector", "mongolian-selector", "selector-supplement", "khmer-vowel",
        "filler-inside", "braille-blank-inside"])
def test_a_name_that_passes_for_another_or_for_none_is_refused(
        registry: Registry, name: str, problem: str) -> None:
    """An outsider registered 'arena-strong' with a Cyrillic a (the preset's name, to the
    eye), 'zq-al-oth' with a Cyrillic o beside alice's bot of that name, and names of Hangul
    fillers alone, which show as blank."""
    with pytest.raises(grpc.RpcError) as caught:
        registry.register(othello_spec(name), token="bob-token")
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert problem in (caught.value.details() or ""), caught.value.details()
    for fine in ("\u03c9\u03bc\u03b5\u03b3\u03b1", "\u0432\u043e\u0434\u0430",
                 "\u65e5\u672cbot", "\u00e9t\u00e9-bot"):  # one script, or not look-alikes
        assert registry.register(othello_spec(fine), token="bob-token").spec.name == fine


@pytest.mark.parametrize(("name", "clash"), [
    ("arena-strong", "is a preset's"),
    ("Arena-Strong", "reads as the preset 'arena-strong'"),
    ("\uff34\uff45\uff52\uff52\uff41", "reads as the preset 'terra'"),  # full-width
    ("sharpmoku-hard", "is a preset's"),  # a gomoku preset's name, for an othello bot
], ids=["exact", "capital", "full-width", "other-game"])
def test_a_preset_s_name_is_kept_for_the_preset(registry: Registry, name: str,
                                                clash: str) -> None:
    """Bob registered 'arena-strong' (or 'Arena-Strong') as a bot of his own: `arena play
    --bot arena-strong` played the preset, while ladders and standings showed his bot
    under the preset's name."""
    with pytest.raises(grpc.RpcError) as caught:
        registry.register(othello_spec(name), token="bob-token")
    assert caught.value.code() == grpc.StatusCode.ALREADY_EXISTS
    assert caught.value.details() == (
        f"the bot name {name!r} {clash} (`arena bot presets`): a preset's name is kept for "
        "the preset, so that no bot passes for one; choose another")


def test_an_admin_registers_a_preset_as_the_bot_of_its_name(registry: Registry) -> None:
    """`make demo` plays the presets as bots of their own names; a user may not, even
    as the preset itself (an update would then change what the name plays)."""
    bot = registry.register(bots_pb2.BotSpec(name="terra"), ADMIN_TOKEN, from_preset="terra")
    assert (bot.spec.name, bot.spec.preset, bot.owner) == ("terra", "terra", "root")
    for spec, preset, token in ((bots_pb2.BotSpec(name="lucy"), "lucy", "bob-token"),
                                (othello_spec("lucy"), "", ADMIN_TOKEN),
                                (bots_pb2.BotSpec(name="Ryo"), "ryo", ADMIN_TOKEN)):
        with pytest.raises(grpc.RpcError) as caught:  # only as that very preset
            registry.register(spec, token, from_preset=preset)
        assert caught.value.code() == grpc.StatusCode.ALREADY_EXISTS, spec


def test_a_bot_stored_under_a_preset_s_name_before_keeps_working(
        registry: Registry, redis_client: redis.Redis) -> None:
    """Refusing preset names applies to new bots: one registered before stays readable,
    and its owner may update and retire it."""
    BotStore(redis_client).create(new_version(othello_spec("madoka"), 1, "alice",
                                              datetime.now(UTC)))
    assert _get(registry, "madoka").owner == "alice"
    assert _update(registry, othello_spec("madoka", stable_disc_score=2)).version == 2
    with pytest.raises(grpc.RpcError) as caught:  # the name is still taken by the bot
        registry.register(othello_spec("madoka"), token="bob-token")
    assert caught.value.code() == grpc.StatusCode.ALREADY_EXISTS
    retired = registry.call("RetireBot", registry_pb2.RetireBotRequest(name="madoka"))
    assert isinstance(retired, bots_pb2.BotVersion) and retired.retired


def test_list_filters_by_game_owner_prefix_and_retired(registry: Registry) -> None:
    registry.register(othello_spec("a-othello"))
    registry.register(gomoku_spec("a-gomoku"))
    registry.register(othello_spec("b-othello"), token="bob-token")
    registry.register(othello_spec("a-retired"))
    registry.call("RetireBot", registry_pb2.RetireBotRequest(name="a-retired"))

    def names(**fields: object) -> list[str]:
        return [bot.spec.name for bot in _list(registry, **fields).bots]

    assert names() == ["a-gomoku", "a-othello", "b-othello"]
    assert names(include_retired=True) == ["a-gomoku", "a-othello", "a-retired", "b-othello"]
    assert names(game=common_pb2.GAME_KIND_OTHELLO) == ["a-othello", "b-othello"]
    assert names(owner="bob") == ["b-othello"]
    assert names(name_prefix="a-") == ["a-gomoku", "a-othello"]
    assert names(name_prefix="a-o", owner="alice") == ["a-othello"]
    assert names(name_prefix="zzz") == []


def test_list_returns_latest_versions_without_pictures(registry: Registry) -> None:
    spec = othello_spec("pictured")
    spec.avatar_png = png_bytes()
    registry.register(spec)
    spec.description = "version 2"
    _update(registry, spec)
    registry.register(othello_spec("plain"))
    pictured, plain = _list(registry).bots
    assert pictured.version == 2 and pictured.spec.avatar_png == b""
    # ... but a list says which bots have one (else a page of a list showed none).
    assert pictured.avatar_omitted and not plain.avatar_omitted
    got = _get(registry, "pictured")
    assert got.spec.avatar_png == spec.avatar_png and not got.avatar_omitted


def test_list_paginates_with_opaque_tokens(registry: Registry) -> None:
    names = [f"bot-{i:02d}" for i in range(23)]
    for name in names:
        registry.register(gomoku_spec(name))
    registry.register(othello_spec("bot-othello"))
    seen: list[str] = []
    token = ""
    pages = 0
    while True:
        reply = _list(registry, game=common_pb2.GAME_KIND_GOMOKU,
                      page=common_pb2.PageRequest(page_size=5, page_token=token))
        seen += [bot.spec.name for bot in reply.bots]
        pages += 1
        token = reply.next_page_token
        if not token:
            break
        assert "bot-" not in token  # opaque: not the raw name
    assert seen == names
    assert pages == 5


def test_list_rejects_a_forged_page_token(registry: Registry) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        _list(registry, page=common_pb2.PageRequest(page_token="not-a-token!"))
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_list_presets_with_their_seed_parameters(registry: Registry) -> None:
    reply = registry.call("ListPresets", registry_pb2.ListPresetsRequest())
    assert isinstance(reply, registry_pb2.ListPresetsResponse)
    by_name = {preset.name: preset for preset in reply.presets}
    assert set(by_name) == set(othello.PRESETS) | set(gomoku.PRESETS)
    for name, preset in by_name.items():
        seed = othello.PRESETS.get(name) or gomoku.PRESETS[name]
        assert builtin_config(bots_pb2.BotSpec(builtin=preset.engine)) == seed
        assert preset.description
    lucy = builtin_config(bots_pb2.BotSpec(builtin=by_name["lucy"].engine))
    assert lucy["force_pass_score"] == 1500
    assert lucy["depth"] == {"begin": 6, "middle": 6, "end": 7}
    assert by_name["sharpmoku-hard"].game == common_pb2.GAME_KIND_GOMOKU


def test_list_presets_for_one_game(registry: Registry) -> None:
    reply = registry.call("ListPresets", registry_pb2.ListPresetsRequest(
        game=common_pb2.GAME_KIND_GOMOKU))
    assert isinstance(reply, registry_pb2.ListPresetsResponse)
    assert {p.name for p in reply.presets} == set(gomoku.PRESETS)
    assert all(p.game == common_pb2.GAME_KIND_GOMOKU for p in reply.presets)


def test_an_update_that_changes_nothing_stores_no_version(registry: Registry) -> None:
    spec = othello_spec("steady")
    registry.register(spec)
    same = _update(registry, spec)
    assert same.version == 1 and same.content_hash == _get(registry, "steady").content_hash
    spec.description = "now different"
    assert _update(registry, spec).version == 2
    assert _update(registry, spec).version == 2  # repeated: still nothing new
    assert _get(registry, "steady").version == 2


def test_a_users_bot_versions_are_bounded_in_bytes(
    redis_server: EmbeddedRedis, redis_client: redis.Redis
) -> None:
    """RegisterBot and UpdateBot were bounded only by creates_per_minute (600): with an
    avatar of 256 KiB in every version, one user could add ~150 MB a minute to the durable
    Redis. The owner's versions now count against bot_bytes, checked in the store's
    scripts before anything is written."""
    config = Config(redis_url=redis_server.url, quotas=json.dumps({"user": {"bot_bytes": 4000}}))
    server = serve("registry", config)
    channel = grpc.insecure_channel(server.target)
    registry = Registry(server.handle, channel, registry_pb2_grpc.BotRegistryStub(channel))
    try:
        stored: list[bots_pb2.BotVersion] = []
        with pytest.raises(grpc.RpcError) as refused:
            for number in range(50):
                stored.append(registry.register(othello_spec(f"bytes-{number}")))
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "quota bot_bytes is 4,000" in (refused.value.details() or "")
        assert 2 <= len(stored) < 50
        refused_name = f"bytes-{len(stored)}"
        with pytest.raises(grpc.RpcError) as missing:  # nothing of it was written
            registry.call("GetBot", registry_pb2.GetBotRequest(
                bot=common_pb2.BotRef(name=refused_name)))
        assert missing.value.code() == grpc.StatusCode.NOT_FOUND
        used = int(redis_client.get(keys.owner_bot_bytes("alice")) or 0)
        assert used == sum(len(bot.SerializeToString()) for bot in stored) <= 4000
        # A new version counts too; another user's share is untouched.
        changed = othello_spec(stored[0].spec.name)
        changed.description = "x" * 2000
        with pytest.raises(grpc.RpcError) as update:
            registry.call("UpdateBot", registry_pb2.UpdateBotRequest(name=changed.name,
                                                                     spec=changed))
        assert update.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert registry.register(othello_spec("bytes-bob"), "bob-token").owner == "bob"
    finally:
        channel.close()
        server.stop()


def _usage(registry: Registry, user: str = "", token: str = "alice-token"
           ) -> registry_pb2.BotUsage:
    reply = registry.call("GetUsage", registry_pb2.GetBotUsageRequest(user=user), token)
    assert isinstance(reply, registry_pb2.BotUsage)
    return reply


def test_get_usage_says_what_a_users_bots_take_of_their_bot_bytes(
    redis_server: EmbeddedRedis, redis_client: redis.Redis
) -> None:
    """A user had no way to see how much of bot_bytes their versions take until a
    registration was refused. GetUsage says it, with the limit the quotas give them: the
    bytes of every version they stored, as registration and updates add them."""
    quotas = {"user": {"bot_bytes": 100_000}, "users": {"bob": {"bot_bytes": 5_000}}}
    server = serve("registry", Config(redis_url=redis_server.url, quotas=json.dumps(quotas)))
    channel = grpc.insecure_channel(server.target)
    registry = Registry(server.handle, channel, registry_pb2_grpc.BotRegistryStub(channel))
    try:
        before = _usage(registry)
        assert (before.user, before.bot_bytes, before.bot_bytes_limit) == ("alice", 0, 100_000)
        first = registry.register(othello_spec("usage-1"))
        after_one = _usage(registry).bot_bytes
        assert after_one == len(first.SerializeToString()) > 0
        spec = othello_spec("usage-1")
        spec.description = "a second version, with a longer description than the first"
        second = _update(registry, spec)
        assert _usage(registry).bot_bytes == after_one + len(second.SerializeToString())
        # Retiring stores nothing and gives nothing back: the versions stay.
        registry.call("RetireBot", registry_pb2.RetireBotRequest(name="usage-1"))
        assert _usage(registry).bot_bytes == after_one + len(second.SerializeToString())

        # bob sees his own (his limit is his own too), never alice's.
        bobs = _usage(registry, token="bob-token")
        assert (bobs.user, bobs.bot_bytes, bobs.bot_bytes_limit) == ("bob", 0, 5_000)
        with pytest.raises(grpc.RpcError) as denied:
            _usage(registry, "alice", "bob-token")
        assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED
        assert denied.value.details() == "bob may not read the usage of 'alice'"

        # An admin reads anyone's: a user with no bots uses nothing.
        assert _usage(registry, "alice", ADMIN_TOKEN) == _usage(registry)
        nobody = _usage(registry, "nobody", ADMIN_TOKEN)
        assert (nobody.user, nobody.bot_bytes, nobody.bot_bytes_limit) == ("nobody", 0, 100_000)
        for absurd in ("a" * 100_000, "al\x1b[2Jice"):
            with pytest.raises(grpc.RpcError) as refused:
                _usage(registry, absurd, ADMIN_TOKEN)
            assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            details = refused.value.details() or ""
            assert "user: a user's name: at most 200 printable characters" in details
            assert len(details) < 1_500 and "\x1b" not in details
    finally:
        channel.close()
        server.stop()

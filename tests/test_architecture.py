"""The shape of the code, checked: service boundaries, no import cycles, key ownership.

- No service package imports another service's package (what services share lives in
  ``services/common``, the protocol package, or the core); the SDK imports no service code.
- No import cycle among the modules under ``services/`` and ``clients/``.
- Every module of the protocol package names the service that owns its keys (``OWNER``) and
  those it shares them with (``SHARED_WITH``); a service imports only the protocol modules
  it owns or shares.
- The core (``arena/``) imports neither services nor clients.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SERVICES = ("registry", "referee", "worker", "ladder", "web")


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[0] in ("services", "clients"):
        parts = ["arena", *parts]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules(*folders: str) -> dict[str, Path]:
    return {_module_name(p): p for folder in folders for p in sorted((ROOT / folder).rglob("*.py"))}


def _imports(name: str, path: Path) -> Iterator[str]:
    """Every module ``name`` imports (absolute names; relative imports resolved)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names)


def _service_of(module: str) -> str | None:
    parts = module.split(".")
    if len(parts) > 2 and parts[:2] == ["arena", "services"] and parts[2] in SERVICES:
        return parts[2]
    return None


def test_no_service_imports_another_and_the_sdk_imports_no_service() -> None:
    modules = _modules("services", "clients")
    bad = []
    for name, path in modules.items():
        for target in _imports(name, path):
            mine, theirs = _service_of(name), _service_of(target)
            if mine and theirs and mine != theirs:
                bad.append(f"{name} imports {target}")
            if name == "arena.clients.sdk" and target.startswith("arena.services"):
                bad.append(f"the SDK imports {target}")
    assert bad == []


def test_no_import_cycle_among_services_and_clients() -> None:
    modules = _modules("services", "clients")
    edges = {name: {t for t in _imports(name, path) if t in modules and t != name}
             for name, path in modules.items()}
    cycles: list[list[str]] = []
    state: dict[str, int] = {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt):], nxt])
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = 2

    for module in sorted(edges):
        if module not in state:
            visit(module, [])
    assert cycles == []


def test_the_core_imports_no_service_and_no_client() -> None:
    bad = [f"{name} imports {target}" for name, path in _modules("arena").items()
           if not name.startswith("arena.v1")
           for target in _imports(name, path)
           if target.startswith(("arena.services", "arena.clients"))]
    assert bad == []


PROTOCOL = "arena.services.common.protocol"
PROTOCOL_MODULES = sorted(name for name in _modules("services/common/protocol")
                          if name != PROTOCOL)


@pytest.mark.parametrize("module", PROTOCOL_MODULES)
def test_each_protocol_module_is_owned_and_used_only_by_its_services(module: str) -> None:
    loaded = importlib.import_module(module)
    owner = getattr(loaded, "OWNER", None)
    shared = tuple(getattr(loaded, "SHARED_WITH", ()))
    if owner is None:  # names, the stream consumer, create-once, owners' indexes: shared
        assert module.rsplit(".", 1)[1] in ("keys", "streams", "requests", "limits", "indexes")
        return
    assert owner in SERVICES and set(shared) <= set(SERVICES)
    users = {_service_of(name) for name, path in _modules("services").items()
             if any(t == module or t.startswith(module + ".") for t in _imports(name, path))}
    users.discard(None)
    assert users <= {owner, *shared}, f"{module} is {owner}'s; also used by {users}"

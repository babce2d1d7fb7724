"""The one rule of the house (docs/architecture.md): a room imports only rooms below it in
:data:`LAYERS`, at module level and inside functions alike, with no exception; so no two rooms
import each other, directly or round a circle. The command lines (``robust_mrc/cli``) are the top
room; ``python -m`` entry points (``__main__.py``) import what they run."""

from __future__ import annotations

import ast
import dataclasses
import importlib
from pathlib import Path

from robust_mrc.core import settings as S

PACKAGE = Path(__file__).resolve().parents[1] / "robust_mrc"

# lowest first; rooms on one line are peers that do not import each other
LAYERS = [
    ["core"],
    ["papers", "data"],
    ["metrics"],
    ["attacks"],
    ["policies", "diagnostics"],
    ["datamodules"],
    ["models"],
    ["evaluation"],
    ["reports"],
    ["trainer"],
    ["config"],
    ["banks"],
    ["jobs", "export"],
    ["cli"],
]


def _rank(room: str) -> int:
    for i, rooms in enumerate(LAYERS):
        if room in rooms:
            return i
    raise AssertionError(f"robust_mrc.{room} is in no layer of tests/test_architecture.py::LAYERS (add it)")


def _room(module: str) -> str:
    return module.split(".")[1]


def _imports(path: Path) -> list[tuple[str, int]]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and node.module.startswith("robust_mrc."):
            out.append((node.module, node.lineno))
        elif isinstance(node, ast.ImportFrom) and node.module == "robust_mrc":
            out += [(f"robust_mrc.{a.name}", node.lineno) for a in node.names]
        elif isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names if a.name.startswith("robust_mrc.")]
    return out


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_every_room_imports_only_rooms_below_it():
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "__main__.py":
            continue
        module = _module(path)
        here = _rank(_room(module)) if "." in module else None
        for target, line in _imports(path):
            if here is None:
                continue
            if _rank(_room(target)) > here:
                wrong.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {target}")
    assert not wrong, "imports against the direction of docs/architecture.md:\n" + "\n".join(wrong)


def test_no_two_rooms_import_each_other_round_a_circle():
    """The rooms' import graph (function-local imports and entry points included) has no circle."""
    edges: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        module = _module(path)
        if "." not in module:
            continue
        for target, _ in _imports(path):
            if _room(target) != _room(module):
                edges.setdefault(_room(module), set()).add(_room(target))
    state: dict[str, int] = {}

    def visit(room: str, trail: list[str]) -> None:
        state[room] = 1
        for nxt in sorted(edges.get(room, ())):
            assert state.get(nxt) != 1, "rooms import each other round a circle: " + " -> ".join([*trail, room, nxt])
            if nxt not in state:
                visit(nxt, [*trail, room])
        state[room] = 2

    for room in sorted(edges):
        if room not in state:
            visit(room, [])


def _settings_classes() -> list[type]:
    return [c for c in vars(S).values() if isinstance(c, type) and dataclasses.is_dataclass(c) and c.__module__ == S.__name__]


def test_every_module_name_string_of_the_settings_resolves():
    """A ``choice`` setting may name its values as ``"module:NAME"`` (resolved when checked): each names a
    module of the package and a sequence in it, so the import graph's blind spot cannot hide a broken name."""
    named = []
    for cls in _settings_classes():
        for key, field in S.walk(cls):
            spec = field.metadata.get("choices")
            if isinstance(spec, str):
                named.append((f"{cls.__name__}.{key}", spec))
    assert len(named) >= 5
    for where, spec in named:
        module, _, name = spec.partition(":")
        assert module.startswith("robust_mrc.") and name, f"{where}: {spec!r} is not 'robust_mrc.module:NAME'"
        values = getattr(importlib.import_module(module), name, None)
        assert values is not None and len(tuple(values)) > 0, f"{where}: {spec!r} names nothing (or an empty sequence)"


def test_every_room_has_a_layer():
    rooms = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    rooms |= {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    for room in rooms:
        _rank(room)

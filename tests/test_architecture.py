"""The one rule of the house (docs/architecture.md): a room imports only rooms below it in
:data:`LAYERS`, at module level and inside functions alike. Entry points (``__main__.py``) may
import anything."""

from __future__ import annotations

import ast
from pathlib import Path

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
    ["jobs", "export"],
    ["banks"],
]

# The imports that go up, each with its reason. Keep this list short.
UPWARD = {
    # bank: auto trains the span extractor / reads the generator on first use, in a child process
    ("robust_mrc.attacks.mc.distractors", "robust_mrc.banks.auto"),
    ("robust_mrc.attacks.mc.distractors", "robust_mrc.banks.de"),
    ("robust_mrc.attacks.mc.distractors", "robust_mrc.banks.cli"),
}


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
            if here is None or (module, target) in UPWARD:
                continue
            if _rank(_room(target)) > here:
                wrong.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {target}")
    assert not wrong, "imports against the direction of docs/architecture.md:\n" + "\n".join(wrong)


def test_the_upward_exceptions_are_still_needed():
    found = {(_module(p), t) for p in PACKAGE.rglob("*.py") for t, _ in _imports(p)}
    assert UPWARD <= found, f"no longer imported, drop from UPWARD: {sorted(UPWARD - found)}"


def test_every_room_has_a_layer():
    rooms = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    rooms |= {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    for room in rooms:
        _rank(room)

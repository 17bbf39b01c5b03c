"""`SessionWatch` holds no rule: each public method names a use case and hands it to the scheduler.

Checked on the AST: a method's body (after its docstring) is at most two statements, with no
branch, loop, `try` or `with` in it. A rule needs one of those; it belongs in `adapters/app` or
`domain/`.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ENTRY = Path(__file__).resolve().parents[2] / "adapters" / "entry"
FACADES = {"SessionWatch": ENTRY / "watch.py", "Upstream": ENTRY / "watch_upstream.py"}
"""The sync façade and its upstream base, generated from the asyncio ones (the same bodies, awaited)."""
CONTROL_FLOW = (
    ast.If,
    ast.IfExp,
    ast.For,
    ast.While,
    ast.Try,
    ast.With,
    ast.Match,
    ast.BoolOp,
    ast.comprehension,
)
LIFECYCLE = {"__init__", "__enter__", "__exit__"}


def facade_methods() -> list[ast.FunctionDef]:
    methods: list[ast.FunctionDef] = []
    for name, path in FACADES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        [facade] = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name]
        methods += [n for n in facade.body if isinstance(n, ast.FunctionDef)]
    return methods


def rule_shapes(method: ast.FunctionDef) -> list[str]:
    """What in the method looks like a rule: too many statements, or control flow."""
    body = method.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    found = [f"{len(body)} statements"] if len(body) > 2 else []
    found += [
        f"{type(node).__name__} at line {node.lineno}"
        for statement in body
        for node in ast.walk(statement)
        if isinstance(node, CONTROL_FLOW) and hasattr(node, "lineno")
    ]
    return found


METHODS = [m for m in facade_methods() if m.name not in LIFECYCLE]


@pytest.mark.parametrize("method", METHODS, ids=lambda m: m.name)
def test_each_facade_method_only_hands_its_use_case_to_the_scheduler(method: ast.FunctionDef) -> None:
    assert rule_shapes(method) == []


def test_the_check_sees_the_facade_and_would_see_a_rule() -> None:
    names = {m.name for m in METHODS}
    assert {"record", "record_human_message", "drain", "sweep", "session_status", "upstream_tick"} <= names
    rule = ast.parse("def f(self, x):\n    '''Doc.'''\n    if x:\n        return 1\n    return 2\n").body[0]
    assert isinstance(rule, ast.FunctionDef)
    assert rule_shapes(rule) == ["If at line 3"]

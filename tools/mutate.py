"""A small mutation tester: how many small changes to a module do its tests notice?

    .venv/bin/python tools/mutate.py langchain_kimi/_http/sse.py tests/unit_tests/test_sse_parser.py

Each mutant changes one spot of the module (a comparison, an arithmetic or boolean operator, a
number, `True`/`False`/`None`, a `not`, an `if` condition negated, a call statement dropped, a
`return` value) and runs the given tests against it. The package and the test modules are
imported once; each mutant runs in a forked child that patches the live module (the changed
functions get the mutated code object, so every `from ... import` of them sees it; a changed
module constant gets its new value) and then runs pytest. A mutant is killed when the tests fail
(or time out). A mutant that cannot be patched that way (a decorator argument, a class body) is
counted apart as "not applicable". The survivors are printed with their line, for a human to
judge: kill each non-equivalent one with a test that names the behaviour.

Docstrings and string constants are left alone (changing a message text is rarely a behaviour).
Files are never written: the working tree is not modified. `--only LINE[,...]` limits the lines.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import os
import re
import signal
import sys
import time
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import hypothesis  # noqa: F401  (its pytest plugin imports it at the end of every run)
import pytest

ROOT = Path(__file__).resolve().parents[1]

_COMPARE_SWAPS: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
_BINOP_SWAPS: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Div,
    ast.Mod: ast.Mult,
    ast.BitOr: ast.BitAnd,
    ast.BitAnd: ast.BitOr,
}


@dataclass(frozen=True)
class Mutant:
    line: int
    col: int
    end_line: int
    end_col: int
    replacement: str
    description: str

    def apply(self, source: str) -> str:
        lines = source.splitlines(keepends=True)
        offsets = [0]
        for line in lines:
            offsets.append(offsets[-1] + len(line.encode("utf-8")))
        raw = source.encode("utf-8")
        start = offsets[self.line - 1] + self.col
        end = offsets[self.end_line - 1] + self.end_col
        return (raw[:start] + self.replacement.encode("utf-8") + raw[end:]).decode("utf-8")


def _docstring_nodes(tree: ast.AST) -> set[int]:
    found: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body:
            first = body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            found.add(id(node.value))  # attribute docstrings
    return found


def _span(node: ast.expr | ast.stmt, text: str, description: str) -> Mutant:
    assert node.end_lineno is not None
    assert node.end_col_offset is not None
    return Mutant(
        node.lineno, node.col_offset, node.end_lineno, node.end_col_offset, text, description
    )


def _mutants(source: str) -> Iterator[Mutant]:
    tree = ast.parse(source)
    docstrings = _docstring_nodes(tree)
    annotations: set[int] = set()
    for node in ast.walk(tree):
        for field in ("annotation", "returns"):
            sub = getattr(node, field, None)
            if sub is not None:
                annotations.update(id(n) for n in ast.walk(sub))
    for node in ast.walk(tree):
        if id(node) in annotations:
            continue
        if isinstance(node, ast.Compare):
            for index, op in enumerate(node.ops):
                swap = _COMPARE_SWAPS.get(type(op))
                if swap is None:
                    continue
                changed = ast.Compare(node.left, list(node.ops), node.comparators)
                changed.ops[index] = swap()
                text = f"({ast.unparse(changed)})"
                yield _span(node, text, f"{type(op).__name__} -> {swap.__name__}")
        elif isinstance(node, ast.BinOp) and type(node.op) in _BINOP_SWAPS:
            swap_op = _BINOP_SWAPS[type(node.op)]
            changed_op = ast.BinOp(node.left, swap_op(), node.right)
            yield _span(
                node,
                f"({ast.unparse(changed_op)})",
                f"{type(node.op).__name__} -> {swap_op.__name__}",
            )
        elif isinstance(node, ast.BoolOp):
            other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
            yield _span(node, f"({ast.unparse(ast.BoolOp(other, node.values))})", "and <-> or")
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            yield _span(node, f"({ast.unparse(node.operand)})", "not dropped")
        elif isinstance(node, ast.Constant) and id(node) not in docstrings:
            value = node.value
            if isinstance(value, bool):
                yield _span(node, repr(not value), f"{value} -> {not value}")
            elif isinstance(value, int):
                yield _span(node, repr(value + 1), f"{value} -> {value + 1}")
                if value != 0:
                    yield _span(node, "0", f"{value} -> 0")
            elif isinstance(value, float):
                yield _span(node, repr(value * 2 + 1), f"{value} -> {value * 2 + 1}")
            elif value is None:
                yield _span(node, "0", "None -> 0")
        elif isinstance(node, ast.If):
            yield _span(node.test, f"(not ({ast.unparse(node.test)}))", "if condition negated")
        elif isinstance(node, ast.Return) and node.value is not None:
            if not (isinstance(node.value, ast.Constant) and node.value.value is None):
                yield _span(node, "return None", "return value -> None")
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call | ast.Await):
            yield _span(node, "pass", "call statement dropped")


def _code_key(code: types.CodeType) -> tuple[object, ...]:
    """What a code object does, without its line numbers."""
    consts = tuple(
        ("code", c.co_qualname) if isinstance(c, types.CodeType) else (type(c).__name__, repr(c))
        for c in code.co_consts
    )
    return (code.co_code, code.co_names, consts)


def _codes(code: types.CodeType) -> dict[str, types.CodeType]:
    """Every function code object in a module's code, by qualified name."""
    found: dict[str, types.CodeType] = {}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found[const.co_qualname] = const
            found.update(_codes(const))
    return found


def _functions(module: types.ModuleType) -> dict[str, list[types.FunctionType]]:
    """The module's function objects (methods, properties, wrapped functions included)."""
    found: dict[str, list[types.FunctionType]] = {}
    seen: set[int] = set()

    def add(obj: object) -> None:
        if id(obj) in seen:
            return
        seen.add(id(obj))
        if isinstance(obj, staticmethod | classmethod):
            add(obj.__func__)
        elif isinstance(obj, property):
            for part in (obj.fget, obj.fset, obj.fdel):
                if part is not None:
                    add(part)
        elif isinstance(obj, types.FunctionType):
            if obj.__module__ == module.__name__:
                found.setdefault(obj.__code__.co_qualname, []).append(obj)
        elif isinstance(obj, type) and obj.__module__ == module.__name__:
            for value in vars(obj).values():
                add(value)
        wrapped = getattr(obj, "__wrapped__", None)
        if wrapped is not None:
            add(wrapped)

    for value in list(vars(module).values()):
        add(value)
    return found


_SIMPLE = (int, float, str, bytes, bool, type(None), tuple, frozenset, re.Pattern)


def _apply(module: types.ModuleType, mutated: str, original_code: types.CodeType) -> bool:
    """Patch the live module with the mutated source: changed functions get the new code
    (every reference to them sees it), changed simple module constants their new value.
    False when the mutant cannot be applied that way (a decorator argument, a class body)."""
    code = compile(mutated, module.__file__ or "", "exec")
    old_codes, new_codes = _codes(original_code), _codes(code)
    changed = [
        name
        for name, new in new_codes.items()
        if name in old_codes and _code_key(new) != _code_key(old_codes[name])
    ]
    functions = _functions(module)
    applied = False
    for name in changed:
        for function in functions.get(name, []):
            try:
                function.__code__ = new_codes[name]
            except ValueError:
                return False
            applied = True
    if _code_key(code) != _code_key(original_code):  # module level: constants only
        fresh: dict[str, object] = {"__name__": module.__name__, "__file__": module.__file__}
        fresh_original: dict[str, object] = dict(fresh)
        exec(code, fresh)
        exec(original_code, fresh_original)
        for name, value in fresh.items():
            before = fresh_original.get(name)
            if isinstance(value, _SIMPLE) and repr(value) != repr(before):
                setattr(module, name, value)
                applied = True
    return applied


def _run(
    tests: list[str], timeout: float, patch: Callable[[], bool] | None = None, *, quiet: bool = True
) -> str:
    """'killed', 'survived', 'timeout' or 'skipped' (the mutant could not be applied)."""
    pid = os.fork()
    if pid == 0:  # the child: apply the mutant, run the tests, report through the exit code
        if patch is not None and not patch():
            os._exit(99)
        if quiet:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
        # Plain asserts: rewriting every plugin and conftest again in each child costs more
        # than the tests (a failing assert still fails).
        options = ["-x", "-q", "-p", "no:randomly", "-p", "no:xdist", "--assert=plain"]
        code = pytest.main([*tests, *options])
        os._exit(int(code))
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            exit_code = os.waitstatus_to_exitcode(status)
            if exit_code == 99:
                return "skipped"
            return "survived" if exit_code == 0 else "killed"
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return "timeout"
        time.sleep(0.02)


def _test_module(path: str) -> str:
    return path.split("::")[0].removesuffix(".py").replace("/", ".")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    parser.add_argument("module", help="the module to mutate, e.g. langchain_kimi/_http/sse.py")
    parser.add_argument("tests", nargs="+", help="the test files (or node ids) covering it")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--only", default="", help="comma-separated line numbers")
    args = parser.parse_args()

    os.chdir(ROOT)
    sys.path.insert(0, str(ROOT))
    target = ROOT / args.module
    name = args.module.removesuffix(".py").replace("/", ".").removesuffix(".__init__")
    module = importlib.import_module(name)
    importlib.import_module("tests.conftest")
    for test in args.tests:  # imported once here, so every child only runs them
        importlib.import_module(_test_module(test))
    original = target.read_text(encoding="utf-8")
    original_code = compile(original, str(target), "exec")
    only = {int(n) for n in args.only.split(",") if n}
    mutants = [m for m in _mutants(original) if not only or m.line in only]
    if _run(args.tests, args.timeout, quiet=False) != "survived":
        raise SystemExit("the tests fail on the unmutated module: fix them first")
    counts = {"killed": 0, "survived": 0, "timeout": 0, "skipped": 0}
    survivors: list[Mutant] = []
    started = time.monotonic()
    for mutant in mutants:
        mutated = mutant.apply(original)
        try:
            compile(mutated, str(target), "exec")
        except SyntaxError:
            continue
        outcome = _run(
            args.tests,
            args.timeout,
            lambda mutated=mutated: _apply(module, mutated, original_code),  # type: ignore[misc]
        )
        counts[outcome] += 1
        print(f"  {mutant.line}: {mutant.description}: {outcome}", file=sys.stderr, flush=True)
        if outcome == "survived":
            survivors.append(mutant)
    lines = original.splitlines()
    for mutant in survivors:
        text = lines[mutant.line - 1].strip()
        print(f"SURVIVED {args.module}:{mutant.line}: {mutant.description}: {text}")
    total = counts["killed"] + counts["timeout"] + counts["survived"]
    killed = counts["killed"] + counts["timeout"]
    rate = 100.0 * killed / total if total else 100.0
    print(
        f"{args.module}: {total} mutants, {killed} killed ({counts['timeout']} by timeout), "
        f"{counts['survived']} survived, {counts['skipped']} not applicable: {rate:.1f} % "
        f"({time.monotonic() - started:.0f} s)"
    )


if __name__ == "__main__":
    main()

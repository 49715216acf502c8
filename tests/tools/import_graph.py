"""The project's module import graph, read with `ast` (nothing is imported), and the checks of its shape.

Folders are named by the import names they install as (`suite/` is `winsuite`, `reports/` is `winsuite_reports`).
Every import counts, function-level ones included, except those under `if TYPE_CHECKING:` (no runtime edge).
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterable
from collections.abc import Iterator
from pathlib import Path


@dataclasses.dataclass(frozen=True)
class Rule:
    """Modules under `source` must not import, directly or through other project modules, what `forbidden` names.

    `allowed_only`, when given, lists the only project prefixes `source` may import directly (besides itself).
    """

    source: str
    forbidden: tuple[str, ...] = ()
    allowed_only: tuple[str, ...] = ()
    why: str = ""


def within(name: str, prefixes: Iterable[str]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


class ImportGraph:
    def __init__(self, roots: dict[str, Path]) -> None:
        """`roots` maps an import name to its folder, e.g. {"winsuite": ROOT / "suite"}."""
        self.files: dict[str, Path] = {}
        for top, folder in roots.items():
            for path in sorted(folder.rglob("*.py")):
                parts = list(path.relative_to(folder).with_suffix("").parts)
                if parts[-1] == "__init__":
                    parts.pop()
                self.files[".".join([top, *parts])] = path
        self.edges: dict[str, set[str]] = {m: self._project_imports(m) for m in self.files}

    def _resolve(self, name: str) -> str | None:
        """The project module that importing `name` loads (the longest existing prefix), or None."""
        while name:
            if name in self.files:
                return name
            name = name.rpartition(".")[0]
        return None

    def _project_imports(self, module: str) -> set[str]:
        path = self.files[module]
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        found: set[str] = set()
        for base, members in import_statements(ast.parse(path.read_text(encoding="utf-8")), package):
            modules = {self._resolve(m) for m in members}
            # `from pkg import sub` loads pkg/__init__ too, but as a parent package: no edge of its own unless
            # the statement also takes a name defined in pkg/__init__.
            if not members or any(m not in self.files for m in members):
                modules.add(self._resolve(base))
            found.update(m for m in modules if m is not None and m != module)
        return found

    def reachable(self, module: str) -> dict[str, list[str]]:
        """Every project module `module` loads, with one import chain leading to it."""
        chains: dict[str, list[str]] = {module: [module]}
        queue = [module]
        while queue:
            current = queue.pop(0)
            for nxt in sorted(self.edges[current]):
                if nxt not in chains:
                    chains[nxt] = [*chains[current], nxt]
                    queue.append(nxt)
        del chains[module]
        return chains

    def violations(self, rule: Rule) -> list[str]:
        problems: list[str] = []
        for module in (m for m in self.files if within(m, [rule.source])):
            for target, chain in self.reachable(module).items():
                if within(target, rule.forbidden):
                    problems.append(f"{' -> '.join(chain)}  ({rule.why or 'forbidden'})")
            if rule.allowed_only:
                for target in sorted(self.edges[module]):
                    if not within(target, (rule.source, *rule.allowed_only)):
                        problems.append(f"{module} -> {target}  (only {', '.join(rule.allowed_only)} allowed)")
        return problems

    def cycles(self) -> list[list[str]]:
        """Strongly connected components of more than one module (Tarjan), each sorted."""
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        stack: list[str] = []
        on_stack: set[str] = set()
        found: list[list[str]] = []

        def visit(node: str) -> None:
            index[node] = low[node] = len(index)
            stack.append(node)
            on_stack.add(node)
            for nxt in self.edges[node]:
                if nxt not in index:
                    visit(nxt)
                    low[node] = min(low[node], low[nxt])
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))

        for node in sorted(self.files):
            if node not in index:
                visit(node)
        return sorted(found)


def imported_names(tree: ast.AST, package: str) -> Iterator[str]:
    """Every name an import statement names (see import_statements), flattened."""
    for base, members in import_statements(tree, package):
        yield base
        yield from members


def import_statements(tree: ast.AST, package: str) -> Iterator[tuple[str, tuple[str, ...]]]:
    """(module, `module.name` for each name taken from it) per import: plain, from (relative ones resolved),
    import_module('x')."""
    skipped = {id(n) for node in ast.walk(tree) if _is_type_checking_block(node) for n in ast.walk(node)}
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            yield from ((alias.name, ()) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            yield module, tuple(f"{module}.{alias.name}" for alias in node.names if alias.name != "*")
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
            "import_module", "__import__"
        ):
            yield from ((a.value, ()) for a in node.args[:1]
                        if isinstance(a, ast.Constant) and isinstance(a.value, str))


def _is_type_checking_block(node: ast.AST) -> bool:
    if not isinstance(node, ast.If):
        return False
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )

"""The project's module import graph, read with `ast` (nothing is imported), and the checks of its shape.

A module's name is its path under a source root (`suite/winsuite/run/runner.py` is `winsuite.run.runner`).
Every import counts, function-level ones included, except those under `if TYPE_CHECKING:` (no runtime edge).
An `import_module`/`__import__` of a literal name is an edge; one of a computed name is listed by dynamic_imports.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Sequence
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
    def __init__(self, source_roots: Sequence[Path]) -> None:
        """Every package found under the source roots (folders with an `__init__.py`), e.g. [ROOT / "suite"]."""
        self.files: dict[str, Path] = {}
        for root in source_roots:
            for package in sorted(p.parent for p in root.glob("*/__init__.py")):
                for path in sorted(package.rglob("*.py")):
                    parts = list(path.relative_to(root).with_suffix("").parts)
                    if parts[-1] == "__init__":
                        parts.pop()
                    self.files[".".join(parts)] = path
        self.roots = tuple(sorted({name.partition(".")[0] for name in self.files}))
        self.trees = {m: ast.parse(path.read_text(encoding="utf-8")) for m, path in self.files.items()}
        self.edges: dict[str, set[str]] = {m: self._project_imports(m) for m in self.files}
        # with the imports under `if TYPE_CHECKING:` too: a cycle there is a knot in the design all the same
        self.typed_edges: dict[str, set[str]] = {m: self._project_imports(m, type_checking=True) for m in self.files}

    def _resolve(self, name: str) -> str | None:
        """The project module that importing `name` loads (the longest existing prefix), or None."""
        while name:
            if name in self.files:
                return name
            name = name.rpartition(".")[0]
        return None

    def _project_imports(self, module: str, *, type_checking: bool = False) -> set[str]:
        path = self.files[module]
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        found: set[str] = set()
        for base, members in import_statements(self.trees[module], package, type_checking=type_checking):
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

    def cycles(self, *, type_checking: bool = False) -> list[list[str]]:
        """Module cycles: strongly connected components of more than one module, each sorted (`type_checking`: the
        imports under `if TYPE_CHECKING:` counted too)."""
        return strongly_connected(self.typed_edges if type_checking else self.edges)

    def package_cycles(self) -> list[list[str]]:
        """Cycles between the members (modules and subpackages) of each package: `a.x` importing `b.y` while
        `b.z` imports `a.w` is a cycle between packages a and b, though no module cycle."""
        found: list[list[str]] = []
        for package in sorted(m for m, path in self.files.items() if path.name == "__init__.py"):
            members: dict[str, set[str]] = {}
            for module, targets in self.edges.items():
                source = _member_of(package, module)
                if source is None:
                    continue
                members.setdefault(source, set())
                for target in targets:
                    member = _member_of(package, target)
                    if member is not None and member != source:
                        members[source].add(member)
                        members.setdefault(member, set())
            found += strongly_connected(members)
        return sorted(found)

    def layer_violations(self, order: Sequence[Sequence[str]], outside: Sequence[str] = ()) -> list[str]:
        """Imports against the layer order (`order` bottom up, each layer a tuple of prefixes): a module imports
        its own layer and those below it only. Every module is in a layer, in `outside` (checked by Rules), or
        is a root package, which imports nothing. A name in two layers is the longest prefix's."""

        def layer_of(module: str) -> int | None:
            matches = [(len(p), i) for i, layer in enumerate(order) for p in layer if within(module, [p])]
            return max(matches)[1] if matches else None

        problems: list[str] = []
        for module in sorted(self.files):
            own = layer_of(module)
            if within(module, outside):
                continue
            if own is None and module in self.roots:
                problems += [f"{module} -> {t}  (a root package imports nothing)" for t in sorted(self.edges[module])]
                continue
            if own is None:
                problems.append(f"{module}  (in no layer)")
                continue
            for target in sorted(self.edges[module]):
                theirs = layer_of(target)
                if theirs is None:
                    problems.append(f"{module} -> {target}  ({target} is in no layer)")
                elif theirs > own:
                    problems.append(f"{module} -> {target}  ({order[theirs][0]} is above {order[own][0]})")
        return problems

    def dynamic_imports(self) -> dict[str, list[int]]:
        """Modules that import a computed name (`import_module(name)`), with the lines: edges the graph cannot
        see."""
        found: dict[str, list[int]] = {}
        for module, tree in self.trees.items():
            lines = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call) and _is_import_call(node)
                     and _literal_name(node) is None]
            if lines:
                found[module] = sorted(lines)
        return found


def _member_of(package: str, module: str) -> str | None:
    """The member of `package` (a module or subpackage directly in it) that holds `module`, or None."""
    if not module.startswith(package + "."):
        return None
    return f"{package}.{module[len(package) + 1:].partition('.')[0]}"


def strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan), each sorted, in order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in edges.get(node, ()):
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

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return sorted(found)


def imported_names(tree: ast.AST, package: str) -> Iterator[str]:
    """Every name an import statement names (see import_statements), flattened."""
    for base, members in import_statements(tree, package):
        yield base
        yield from members


def import_statements(tree: ast.AST, package: str, *, type_checking: bool = False
                      ) -> Iterator[tuple[str, tuple[str, ...]]]:
    """(module, `module.name` for each name taken from it) per import: plain, from (relative ones resolved),
    import_module('x'); those under `if TYPE_CHECKING:` only when `type_checking`."""
    skipped = set() if type_checking else {
        id(n) for node in ast.walk(tree) if _is_type_checking_block(node) for n in ast.walk(node)}
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
        elif isinstance(node, ast.Call) and _is_import_call(node):
            name = _literal_name(node)
            if name is not None:
                yield name, ()


def _is_import_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
        "import_module", "__import__")


def _literal_name(call: ast.Call) -> str | None:
    """The module an import call names as a string literal, or None when it computes the name."""
    first = call.args[0] if call.args else None
    return first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None


def _is_type_checking_block(node: ast.AST) -> bool:
    if not isinstance(node, ast.If):
        return False
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )

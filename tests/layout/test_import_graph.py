"""``py/phone_agent`` is layered and has no import cycles: the import graph, computed from the source,
is a DAG, and no import runs from a lower layer to a higher one.

Every import counts, wherever it stands: at the top, inside a function, or under ``TYPE_CHECKING``
(a type-only back-reference is still a dependency the reader must hold in mind). An import also runs
the ``__init__`` of every package on the way to its module (``from .agent.looks import x`` runs
``agent/__init__.py``, and whatever that imports), so those packages count as imported too — except
the importing module's own ancestors, which Python has already started.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "py"
PACKAGE = ROOT / "phone_agent"

# Cycles that remain, each as the module prefixes it may span. Shrink this list; never grow it.
ALLOWED_CYCLES: list[frozenset[str]] = []

# The layers, lowest first: a module imports only from its own layer or lower ones. Each entry is a
# package (or root module) of phone_agent; the root package itself (its version) is below them all.
LAYERS: list[set[str]] = [
    {"errors", "tasks", "arg_types"},  # words every layer uses: failures, a task's record, CLI types
    {"device"},  # the Device interface, its wrapper, the shell result
    {"adb"},  # ADB, pure: packets, connections, services, AdbDevice
    {"scrcpy"},  # scrcpy's protocol and ScrcpyDevice, over adb
    {"flows"},  # Maestro flows, pure: reader, command table, selectors, runner, recorder
    {"tools"},  # the catalog: specs, handlers by family, dispatch, results — on Device only
    {"relay"},  # the relay's wire format and the server's pure core
    {"agent"},  # the Plan-and-Resolve agent, through the catalog
    {"farm"},  # the farm's pure core: frames, the page's service, the registry
    {"sim"},  # the simulated phone (CPython)
    {"browser"},  # the page's adapters (Pyodide)
    {"server"},  # the CPython server's adapters
    {"cli"},
]


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(name: str, path: Path, modules: set[str]) -> set[str]:
    """The modules of this package that ``path`` (module ``name``) imports, anywhere in it."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            targets = [module] + [f"{module}.{alias.name}" for alias in node.names]
        else:
            continue
        found.update(t for t in targets if t in modules)
        for target in targets:  # the packages whose __init__ the import runs on its way
            parts = target.split(".")
            found.update(".".join(parts[:i]) for i in range(1, len(parts)) if ".".join(parts[:i]) in modules)
    return {t for t in found if t != name and not name.startswith(t + ".")}


def import_graph() -> dict[str, set[str]]:
    paths = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    return {name: imports_of(name, path, set(paths)) for name, path in paths.items()}


def cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)
    return found


def within(component: set[str], prefixes: frozenset[str]) -> bool:
    return all(any(m == p or m.startswith(p + ".") for p in prefixes) for m in component)


def allowed(component: set[str]) -> bool:
    return any(within(component, prefixes) for prefixes in ALLOWED_CYCLES)


def test_the_package_has_no_import_cycles_beyond_the_allowed_list():
    found = cycles(import_graph())
    unexpected = [sorted(c) for c in found if not allowed(c)]
    assert not unexpected, f"import cycles: {unexpected}"


def test_every_allowed_cycle_still_exists():
    found = cycles(import_graph())
    stale = [sorted(p) for p in ALLOWED_CYCLES if not any(within(c, p) for c in found)]
    assert not stale, f"these cycles are gone: remove them from ALLOWED_CYCLES: {stale}"


def test_the_cycle_finder_finds_a_planted_cycle_and_passes_a_dag():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_the_simulated_phone_depends_on_neither_the_server_package_nor_the_cli_nor_its_own_server():
    graph = import_graph()
    for name, targets in graph.items():
        if name == "phone_agent.sim" or name.startswith("phone_agent.sim."):
            assert not {t for t in targets if t.startswith("phone_agent.server")}, name
            assert "phone_agent.cli" not in targets, name
    for name in ("phone_agent.sim.connection", "phone_agent.sim.services", "phone_agent.sim.state_http"):
        assert "phone_agent.sim.server" not in graph[name], name


def layer_of(module: str) -> int:
    parts = module.split(".")
    if len(parts) == 1:
        return -1
    for rank, members in enumerate(LAYERS):
        if parts[1] in members:
            return rank
    raise AssertionError(f"{module} is in no layer: add its package to LAYERS")


def test_no_import_runs_from_a_lower_layer_to_a_higher_one():
    upward = sorted(
        f"{name} -> {target}"
        for name, targets in import_graph().items()
        for target in targets
        if layer_of(target) > layer_of(name)
    )
    assert not upward, "imports that run up a layer:\n" + "\n".join(upward)


def test_the_catalog_reaches_the_phone_through_the_device_interface_only():
    """Nothing under tools/ imports adb/ (its commands and their quoting belong to AdbDevice)."""
    graph = import_graph()
    reached = sorted(
        f"{name} -> {target}"
        for name, targets in graph.items()
        if name.startswith("phone_agent.tools.")
        for target in targets
        if target == "phone_agent.adb" or target.startswith("phone_agent.adb.")
    )
    assert not reached, reached


def test_an_import_counts_the_package_inits_it_runs(tmp_path):
    """``from ..pkg.mod import x`` runs ``pkg/__init__.py`` too: a loop through an __init__ is a loop."""
    package = tmp_path / "phone_agent"
    (package / "low").mkdir(parents=True)
    (package / "high").mkdir()
    (package / "__init__.py").write_text("")
    (package / "low" / "__init__.py").write_text("")
    (package / "low" / "mod.py").write_text("from ..high.leaf import x\n")
    (package / "high" / "__init__.py").write_text("from .agent import y\n")
    (package / "high" / "agent.py").write_text("from ..low.mod import z\n")
    (package / "high" / "leaf.py").write_text("x = 1\n")
    paths = {module_name(path, tmp_path): path for path in package.rglob("*.py")}
    graph = {name: imports_of(name, path, set(paths)) for name, path in paths.items()}
    assert "phone_agent.high" in graph["phone_agent.low.mod"]
    assert cycles(graph) == [{"phone_agent.low.mod", "phone_agent.high", "phone_agent.high.agent"}]

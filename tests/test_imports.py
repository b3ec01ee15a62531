"""No import cycle in agentrl, analysis or workflow: between modules, and between the three packages.

Every import counts, at the top of a module or inside a function (an import moved into a function to dodge a
cycle keeps the cycle); the rule files' and the Snakefile's imports belong to the package `workflow`.
"""
import ast
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ('agentrl', 'analysis', 'workflow')
# What analysis and the workflow share with agentrl and each other: modules that import neither torch nor pandas.
SHARED = ['agentrl.algorithms', 'agentrl.files', 'agentrl.lengths', 'agentrl.numerics', 'agentrl.substrates',
          'workflow.design']


def module_name(path: Path) -> str:
    """agentrl/files.py -> agentrl.files; agentrl/__init__.py -> agentrl."""
    parts = path.relative_to(REPO).with_suffix('').parts
    return '.'.join(parts[:-1] if parts[-1] == '__init__' else parts)


def python_modules() -> dict[str, Path]:
    """Every module of the three packages, by name."""
    return {module_name(path): path for package in PACKAGES for path in sorted((REPO / package).rglob('*.py'))}


def resolve(importer: str, is_package: bool, node: ast.ImportFrom | ast.Import, known: set[str]) -> set[str]:
    """The project's modules an import statement loads (a name imported from a package is its submodule, if any)."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names if alias.name in known}
    if node.level:
        base = importer.split('.') if is_package else importer.split('.')[:-1]
        base = base[:len(base) - node.level + 1]
        module = '.'.join(base + ([node.module] if node.module else []))
    else:
        module = node.module
    found = {module} if module in known else set()
    return found | {f'{module}.{alias.name}' for alias in node.names if f'{module}.{alias.name}' in known}


def import_graph() -> dict[str, set[str]]:
    """Module -> the project's modules it imports anywhere in its body (a package's `from . import x` is not an import
    of itself); the rule files count as module `workflow`."""
    modules = python_modules()
    known = set(modules)
    graph = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        graph[name] = {target for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
                       for target in resolve(name, path.name == '__init__.py', node, known)} - {name}
    rule_files = [REPO / 'Snakefile', *sorted((REPO / 'workflow' / 'rules').glob('*.smk'))]
    statements = [line.strip() for path in rule_files for line in path.read_text().splitlines()
                  if re.match(r'\s*(from\s+\S+\s+)?import\s', line)]
    graph.setdefault('workflow', set()).update(
        target for line in statements for node in ast.parse(line).body
        for target in resolve('workflow', True, node, known))
    return graph


def cycles(graph: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """The graph's strongly connected components with more than one node (or a node importing itself), sorted."""
    reach = {node: _reachable(graph, node) for node in graph}
    components = {tuple(sorted(other for other in reach[node] if node in reach[other])) for node in graph}
    return sorted(c for c in components if c)


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    """The nodes reachable from start by one or more edges."""
    seen, todo = set(), list(graph.get(start, ()))
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo.extend(graph.get(node, ()))
    return seen


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Package -> the other packages its modules import."""
    packages = {}
    for module, targets in graph.items():
        package = module.split('.')[0]
        packages.setdefault(package, set()).update(t.split('.')[0] for t in targets if t.split('.')[0] != package)
    return packages


def test_cycles_are_found():
    assert cycles({'a': {'b'}, 'b': {'c'}, 'c': {'a'}, 'd': {'a'}, 'e': {'e'}}) == [('a', 'b', 'c'), ('e',)]
    assert cycles({'a': {'b'}, 'b': set()}) == []


def test_relative_and_absolute_imports_resolve_to_modules():
    graph = import_graph()
    assert {'agentrl', 'agentrl.numerics', 'agentrl.files'} <= graph['agentrl.runio']  # `from . import __version__`
    assert {'agentrl.numerics', 'agentrl.files'} <= graph['analysis.load'] | graph['analysis.records']
    assert 'workflow.design' in graph['workflow'] and 'workflow.design' in graph['analysis.cells']


def test_no_module_imports_itself_through_others():
    assert cycles(import_graph()) == []


def test_the_packages_import_one_way():
    """agentrl imports neither analysis nor workflow; workflow does not import analysis (analysis may read
    workflow.design, the design's registry): no package cycle."""
    packages = package_graph(import_graph())
    assert cycles(packages) == []
    assert packages['agentrl'] == set() and 'analysis' not in packages['workflow']


def loaded_by(modules: list[str]) -> set[str]:
    """The top-level packages a fresh interpreter has loaded after importing these modules."""
    code = f'import importlib, sys\nfor m in {modules!r}: importlib.import_module(m)\nprint(*sys.modules)'
    out = subprocess.run([sys.executable, '-c', code], cwd=REPO, capture_output=True, text=True, check=True)
    return {name.split('.')[0] for name in out.stdout.split()}


def test_the_shared_modules_import_neither_torch_nor_pandas():
    assert not {'torch', 'pandas'} & loaded_by(SHARED)


def test_analysis_and_the_workflow_reach_agentrl_only_through_the_shared_modules():
    reached = {target for module, targets in import_graph().items() if module.split('.')[0] != 'agentrl'
               for target in targets if target.split('.')[0] == 'agentrl'}
    assert reached and reached <= set(SHARED)


def test_the_analysis_imports_no_torch():
    """The analysis runs in its own environment without torch (envs/analysis.yaml)."""
    analysis = [name for name in python_modules() if name.split('.')[0] == 'analysis']
    loaded = loaded_by(analysis)
    assert 'torch' not in loaded and 'pandas' in loaded

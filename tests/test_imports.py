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
SHARED = ['agentrl.learning.algorithms', 'agentrl.files', 'agentrl.chapter.lengths', 'agentrl.numerics',
          'agentrl.world.substrates',
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
    # `from . import __version__`
    assert {'agentrl', 'agentrl.numerics', 'agentrl.files'} <= graph['agentrl.jobs.runio']
    assert {'agentrl.numerics', 'agentrl.files'} <= graph['analysis.records.load'] | graph['analysis.records.records']
    assert 'workflow.design' in graph['workflow'] and 'workflow.design' in graph['analysis.stats.cells']


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


# --- floors: an import points to its own floor or lower ---------------------------------------------------------------

# The packages, lowest first: agentrl imports neither of the others; the workflow reads agentrl's pure modules; the
# analysis reads both.
PACKAGE_FLOORS = ['agentrl', 'workflow', 'analysis']
# Each package's floors, lowest first: a floor is named for its concern and holds folders or modules (a name stands
# for the module and everything below it; a longer name wins: agentrl.numerics.golden is a check, agentrl.numerics
# the pinned settings). Every module of agentrl and analysis is on a floor.
LAYERS = {
    'agentrl': [
        ('base', ['agentrl', 'agentrl.files', 'agentrl.numerics']),  # the package, atomic writes, the pinned settings
        ('world', ['agentrl.world']),  # the language, tasks, environment, tokenizer, substrates (no torch)
        ('agent', ['agentrl.agent']),  # TinyAgent, packing, the sampler
        ('learning', ['agentrl.learning']),  # losses, advantages, PPO, the trainer, pretraining
        ('chapter', ['agentrl.chapter']),  # the chapter's experiments, calibration, lengths
        ('entry', ['agentrl.jobs', 'agentrl.numerics.golden', 'agentrl.numerics.probe', 'agentrl.numerics.audit',
                   'agentrl.numerics.bench', 'agentrl.__main__']),  # what a job or a person runs
    ],
    'analysis': [
        ('base', ['analysis', 'analysis.text']),  # numbers and words
        ('records', ['analysis.records']),  # runs in
        ('stats', ['analysis.stats']),  # statistics across seeds
        ('ledger', ['analysis.ledger']),  # claims, verdicts, looks
        ('pages', ['analysis.pages']),  # what readers see
        ('entry', ['analysis.__main__']),
    ],
}
def floor_of(module: str, layers: dict = LAYERS) -> tuple[int, str] | None:
    """(floor number, floor name) of a module of a layered package, by its longest listed prefix (the package's own
    name places only the package's __init__); None: unplaced."""
    floors = layers.get(module.split('.')[0])
    if floors is None:
        return None
    best = None
    for number, (name, prefixes) in enumerate(floors):
        for prefix in prefixes:
            if module == prefix or ('.' in prefix and module.startswith(prefix + '.')):
                if best is None or len(prefix) > best[0]:
                    best = (len(prefix), number, name)
    return best and best[1:]


def upward(graph: dict[str, set[str]], layers: dict = LAYERS, packages: list[str] = PACKAGE_FLOORS) -> list[str]:
    """Every import that points up: to a higher package, or within a layered package to a higher floor."""
    found = []
    for module, targets in sorted(graph.items()):
        package = module.split('.')[0]
        for target in sorted(targets):
            other = target.split('.')[0]
            if package in packages and other in packages and packages.index(other) > packages.index(package):
                found.append(f'{module} -> {target}: package {package} may not import {other}')
            elif other == package and package in layers:
                here, there = floor_of(module, layers), floor_of(target, layers)
                if here and there and there[0] > here[0]:
                    found.append(f'{module} ({here[1]}) -> {target} ({there[1]}): up a floor')
    return found


def floor_graph(graph: dict[str, set[str]], layers: dict = LAYERS) -> dict[str, set[str]]:
    """package:floor -> the floors of its package that its modules import."""
    floors = {}
    for module, targets in graph.items():
        here = floor_of(module, layers)
        if here:
            key = f'{module.split(".")[0]}:{here[1]}'
            floors.setdefault(key, set()).update(
                f'{t.split(".")[0]}:{there[1]}' for t in targets if (there := floor_of(t, layers))
                and t.split('.')[0] == module.split('.')[0] and there[1] != here[1])
    return floors


def test_an_upward_arrow_a_floor_cycle_and_an_unplaced_module_are_found():
    layers = {'p': [('low', ['p', 'p.low']), ('high', ['p.high'])]}
    graph = {'p.low.a': {'p.high.b'}, 'p.high.b': {'p.low.c'}, 'p.low.c': set(), 'q.x': {'p.low.a'},
             'p.low.d': {'q.x'}, 'p.flat': set()}
    assert upward(graph, layers, ['p', 'q']) == ['p.low.a (low) -> p.high.b (high): up a floor',
                                                 'p.low.d -> q.x: package p may not import q']
    assert cycles(floor_graph(graph, layers)) == [('p:high', 'p:low')]
    assert floor_of('p.high.b.c', layers) == (1, 'high') and floor_of('p.flat', layers) is None
    assert floor_of('p', layers) == (0, 'low') and upward({'p.high.b': {'p.low.c'}}, layers, ['p']) == []


def test_every_module_is_on_a_floor():
    """A new module goes in the folder of its concern (README, "Layout"), not beside the package's __init__."""
    unplaced = [m for m in python_modules() if m.split('.')[0] in LAYERS and floor_of(m) is None]
    assert not unplaced, f'not on any floor of LAYERS (tests/test_imports.py): {unplaced}'


def test_every_import_points_to_its_own_floor_or_lower():
    assert upward(import_graph()) == []


def test_no_floor_imports_itself_through_others():
    assert cycles(floor_graph(import_graph())) == []

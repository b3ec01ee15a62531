"""The golden run: a short trainer run whose digests are pinned next to the numerics version (golden.json).

A run's numbers are its run.json without provenance and timing, and its CSV tables without wall-time columns and
rows. The file pins one digest for each set of CPUs measured to give the same numbers (the CPUs each was seen on, by
vendor): under version 3 AMD's and Intel's differed (agentrl/numerics/__init__.py). tests/test_numerics.py reruns the
golden run on a CPU of a vendor measured at this version and fails when its digest is none of those pinned while
NUMERICS_VERSION did not move, or when the version moved and no digest was pinned again. After a change that moves
the numbers: bump NUMERICS_VERSION (agentrl/numerics/__init__.py), then pin the new digest with

    python -m agentrl.numerics.golden --write

which, at an unchanged version, adds this CPU to the digest it gives (a new entry where it gives a new digest).
(`python -m agentrl.numerics.golden` alone prints the digest and where it was seen). Imports no torch: the run is a
subprocess, `python -m agentrl train`, as a workflow job runs it.
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from ..files import write_text
from . import NUMERICS_VERSION, TIMING, Cpu, this_cpu

GOLDEN_FILE = Path(__file__).with_name('golden.json')
# the test design's PPO cell (config/test.yaml): critic warm-up, sampling, two epochs of two minibatches, evaluation
CONFIG = dict(algorithm='ppo', iterations=2, episodes_per_iteration=16, epochs=2, minibatches=2,
              critic_warmup_steps=5, critic_warmup_episodes_per_task=2, eval_episodes_per_task=2)
SEED = 0


def comparable_run(path: Path) -> dict:
    """A run.json without its provenance and timing summary fields."""
    run = json.loads(Path(path).read_text())
    run.pop('provenance')
    run['summary'] = {k: v for k, v in run['summary'].items() if k not in TIMING}
    return run


def comparable_csv(path: Path) -> list[list[str]]:
    """A CSV's rows without wall-time columns, and without rows that summarise a wall time."""
    rows = list(csv.reader(Path(path).open()))
    if not rows:
        return rows
    keep = [i for i, name in enumerate(rows[0]) if name not in TIMING]
    return [[row[i] for i in keep] for row in rows if not TIMING & set(row)]


def run_digest(run: Path) -> str:
    """SHA-256 of a run directory's numbers: comparable_run, then every CSV's comparable rows by file name."""
    numbers = dict(run=comparable_run(run / 'run.json'),
                   tables={p.name: comparable_csv(p) for p in sorted(run.glob('*.csv'))})
    return hashlib.sha256(json.dumps(numbers, sort_keys=True).encode()).hexdigest()


def golden_command(folder: Path) -> tuple[list[str], Path]:
    """The golden run's command, its config written under folder, and the run directory it makes there."""
    config, out = folder / 'golden.json', folder / 'run'
    config.write_text(json.dumps(CONFIG, sort_keys=True) + '\n')
    return [sys.executable, '-m', 'agentrl', 'train', '--config', str(config), '--seed', str(SEED), '--out',
            str(out)], out


def golden_run(folder: Path) -> Path:
    """Make the golden run under folder (a CLI job: one thread, the base agent from its cache); its run directory."""
    command, out = golden_command(folder)
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f'the golden run failed:\n{done.stderr[-3000:]}')
    return out


def cpu_capability() -> str:
    """The instruction set torch dispatches to here, once agentrl has set the numeric libraries' controls."""
    code = 'import agentrl, torch; print(torch.backends.cpu.get_cpu_capability())'
    return subprocess.run([sys.executable, '-c', code], check=True, capture_output=True, text=True).stdout.strip()


def pinned() -> dict:
    """The pinned golden digests: {numerics_version, config, seed, cpu_capability, digests: {digest: [CPUs]}}."""
    return json.loads(GOLDEN_FILE.read_text())


def pin(golden: dict | None, digest: str, cpu: Cpu, capability: str) -> dict:
    """The golden file with `digest` pinned as seen on `cpu` (under its vendor): added to those of this numerics
    version, golden run and code path, or alone where the file pins another (or none)."""
    same = golden is not None and (golden['numerics_version'], golden['config'], golden['seed'],
                                   golden['cpu_capability']) == (NUMERICS_VERSION, CONFIG, SEED, capability)
    digests = {name: {vendor: list(models) for vendor, models in seen.items()}
               for name, seen in golden['digests'].items()} if same else {}
    seen = digests.setdefault(digest, {})
    seen[cpu.vendor] = sorted({*seen.get(cpu.vendor, []), cpu.model})
    return dict(numerics_version=NUMERICS_VERSION, config=CONFIG, seed=SEED, cpu_capability=capability,
                digests=digests)


def vendors(golden: dict) -> set[str]:
    """The CPU vendors on which some pinned digest was measured."""
    return {vendor for seen in golden['digests'].values() for vendor in seen}


def where(seen: dict[str, list[str]]) -> str:
    """Where a digest was seen: 'model; model' over its vendors."""
    return '; '.join(model for models in seen.values() for model in models)


def main(argv: list[str] | None = None) -> int:
    """Print the golden run's digest and the CPUs it was pinned on; --write pins it for this CPU."""
    parser = argparse.ArgumentParser(prog='python -m agentrl.numerics.golden', description=main.__doc__)
    parser.add_argument('--write', action='store_true', help=f'pin the digest in {GOLDEN_FILE.name}')
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        digest = run_digest(golden_run(Path(folder)))
    golden, cpu = pinned() if GOLDEN_FILE.is_file() else None, this_cpu()
    if args.write:
        write_text(GOLDEN_FILE, json.dumps(pin(golden, digest, cpu, cpu_capability()), indent=2, sort_keys=True) + '\n')
        print(f'{GOLDEN_FILE}: numerics version {NUMERICS_VERSION}, digest {digest} on {cpu.model}')
        return 0
    seen = golden['digests'].get(digest) if golden and golden['numerics_version'] == NUMERICS_VERSION else None
    status = f'pinned, seen on {where(seen)}' if seen else 'not pinned: ' + (
        f'version {golden["numerics_version"]} pins {", ".join(golden["digests"])}' if golden else 'no golden file')
    print(f'golden run digest {digest} at numerics version {NUMERICS_VERSION} on {cpu.model}: {status}')
    return 0 if seen else 1


if __name__ == '__main__':
    sys.exit(main())

"""Does a command execute an instruction whose result depends on the CPU's vendor?

    python -m agentrl.numerics.audit [--out FILE] -- python -m agentrl train --config C --seed 0 --out DIR

IEEE arithmetic (add, multiply, fused multiply-add, divide, square root, conversions) gives the same bits on every
x86-64 CPU; a few instructions do not: the approximate reciprocal and reciprocal square root (rcpps, rsqrtps, their
scalar and VEX forms: Intel's and AMD's tables differ) and the x87 transcendentals (fsin, f2xm1, ...). The command runs
under gdb with a breakpoint on every such instruction of every shared object it maps; each one executed is printed
(library, offset, instruction, function, the first time) and the exit status is 1 where any was. Found under numerics
version 3: the pretraining's Adam took MKL's float sqrt, which refines rsqrtps (agentrl/learning/losses.py). Needs gdb,
objdump and grep; a library's disassembly is scanned once and cached under the agentrl cache folder (libtorch_cpu: about
a minute). Runs at the command's speed except at its libraries' loading.

Pure standard library: gdb loads this same file into its own Python to run the command (`inside_gdb`).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

# One pattern for Python's re and GNU grep -E (which filters objdump's gigabytes before Python reads them): no (?:.
VENDOR_DEPENDENT = re.compile(r'^\s*([0-9a-f]+):\s+((v?(rcp|rsqrt)(ps|ss)|f2xm1|fyl2x|fyl2xp1|fsin|fcos|fsincos|fptan'
                              r'|fpatan)\b.*)$')
SITES_VARIABLE, REPORT_VARIABLE = 'AGENTRL_AUDIT_CACHE', 'AGENTRL_AUDIT_REPORT'
FINISHED = '# finished: '  # the report's last line, once the command has run to its end


def vendor_dependent(listing: str) -> list[tuple[int, str]]:
    """The vendor-dependent instructions of an objdump listing: (address, instruction text)."""
    matches = (VENDOR_DEPENDENT.match(line) for line in listing.splitlines())
    return [(int(m.group(1), 16), ' '.join(m.group(2).split())) for m in matches if m]


def sites(library: str, cache: Path) -> list[tuple[int, str]]:
    """The vendor-dependent instructions of a shared object: (offset from its load address, instruction text)."""
    stat = os.stat(library)
    key = hashlib.sha256(f'{library}:{stat.st_size}:{stat.st_mtime_ns}'.encode()).hexdigest()[:20]
    cached = cache / f'{Path(library).name}-{key}.json'
    if cached.is_file():
        return [tuple(site) for site in json.loads(cached.read_text())]
    listing = subprocess.Popen(['objdump', '-d', '--no-show-raw-insn', library], stdout=subprocess.PIPE)
    candidates = subprocess.run(['grep', '-E', VENDOR_DEPENDENT.pattern], stdin=listing.stdout, capture_output=True,
                                text=True)
    listing.stdout.close()
    if listing.wait() != 0 or candidates.returncode > 1:  # grep: 1 is "no line matched", 2 an error
        raise RuntimeError(f'could not scan {library}: objdump exit {listing.returncode}, grep exit '
                           f'{candidates.returncode} {candidates.stderr.strip()}')
    found = vendor_dependent(candidates.stdout)
    cache.mkdir(parents=True, exist_ok=True)
    temporary = cached.with_suffix('.tmp')
    temporary.write_text(json.dumps(found))
    temporary.replace(cached)
    return found


def mapped_libraries(pid: int) -> dict[str, int]:
    """The files the process maps with some executable part: path -> load address (where the file's start is)."""
    starts, executable = {}, set()
    for line in Path(f'/proc/{pid}/maps').read_text().splitlines():
        fields = line.split()
        if len(fields) >= 6 and fields[5].startswith('/'):
            if int(fields[2], 16) == 0:
                starts.setdefault(fields[5], int(fields[0].split('-')[0], 16))
            if 'x' in fields[1]:
                executable.add(fields[5])
    return {path: start for path, start in starts.items() if path in executable}


def inside_gdb() -> None:
    """In gdb: run the command, arming each library's sites as it is mapped; write one line per site executed."""
    import gdb  # only inside gdb

    cache, report = Path(os.environ[SITES_VARIABLE]), open(os.environ[REPORT_VARIABLE], 'w')
    armed, breakpoints = {}, {}  # library -> its sites; breakpoint number -> its site

    def arm() -> None:
        for library, base in mapped_libraries(gdb.selected_inferior().pid).items():
            if library not in armed:
                armed[library] = sites(library, cache)
                for offset, text in armed[library]:
                    point = gdb.Breakpoint(f'*{base + offset:#x}', internal=True)
                    breakpoints[point.number] = (library, offset, text, point)

    def executed(event) -> None:
        for point in getattr(event, 'breakpoints', []):
            if point.number in breakpoints:
                library, offset, text, point = breakpoints.pop(point.number)
                function = gdb.execute('info symbol $pc', to_string=True).split(' in section')[0].strip()
                report.write(f'{library}\t{offset:#x}\t{text}\t{function}\n')
                report.flush()
                point.enabled = False

    for setting in ('pagination off', 'confirm off', 'stop-on-solib-events 1'):
        gdb.execute(f'set {setting}')
    gdb.events.stop.connect(executed)
    gdb.execute('starti')
    while gdb.selected_inferior().pid:
        arm()
        try:
            gdb.execute('continue')
        except gdb.error:
            break
    report.write(f'{FINISHED}{sum(map(len, armed.values()))} vendor-dependent instructions armed in {len(armed)} '
                 'libraries\n')
    report.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog='python -m agentrl.numerics.audit', description=__doc__.split('\n\n')[0])
    parser.add_argument('--out', type=Path, help='the report file (default: the agentrl cache, audit/last-report.tsv)')
    parser.add_argument('command', nargs=argparse.REMAINDER, help='the command, after --')
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ['--'] else args.command
    if not command:
        parser.error('give the command to audit after --')
    # imports torch: here, not at the top, which gdb's Python runs too
    from ..learning.base_agent import default_cache_dir
    report = args.out or Path(default_cache_dir()) / 'audit' / 'last-report.tsv'
    report.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, SITES_VARIABLE: str(default_cache_dir() / 'audit'), REPORT_VARIABLE: str(report)}
    done = subprocess.run(['gdb', '-q', '-batch', '-x', __file__, '--args', *command], env=env, capture_output=True,
                          text=True)
    lines = report.read_text().splitlines() if report.is_file() else []
    if not lines or not lines[-1].startswith(FINISHED):
        print(f'the audit did not finish (gdb exit {done.returncode}):\n{done.stderr[-2000:]}', file=sys.stderr)
        return 2
    hits = lines[:-1]
    print(f'{lines[-1][len(FINISHED):]}; executed: {len(hits)}')
    for line in hits:
        print(line)
    return 1 if hits else 0


if __name__ == '__main__':
    if 'gdb' in sys.modules:
        inside_gdb()
    else:
        sys.exit(main())

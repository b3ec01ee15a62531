"""The tiny language of BugFix programs: parsing, editing and a traced interpreter.

A program is a few numbered lines over integer variables, each line one of

    VAR = X              VAR = X OP Y
    if X CMP Y then VAR = X [OP Y]
    return X

where X, Y are variables or constants 0..9, OP is + - *, CMP is < <= > >= == !=. Operands,
operators and comparisons are the editable positions of a line; keywords and the assigned
variable are not. Nothing here reaches Python's eval or exec.
"""
from __future__ import annotations

from dataclasses import dataclass

OPERATORS = ('+', '-', '*')
COMPARISONS = ('<', '<=', '>', '>=', '==', '!=')
CONSTANTS = tuple(str(c) for c in range(10))
VARIABLES = ('a', 'b', 'c', 's', 't', 'u')
KEYWORDS = ('=', 'if', 'then', 'return')
MAX_LINES = 5
VALUE_LIMIT = 10 ** 6  # a value beyond this is an overflow error, not a Python bignum

# Plausible one-token repairs: what a careful reader might try in place of each token.
_COMPARISON_FLIPS = {'<': ('<=', '>'), '<=': ('<', '>='), '>': ('>=', '<'), '>=': ('>', '<='),
                     '==': ('!=',), '!=': ('==',)}


class ProgramError(ValueError):
    """A line that does not parse, or an edit that would make one."""


def token_kind(word: str) -> str | None:
    """'operand', 'operator', 'comparison', or None for anything that cannot be edited in."""
    if word in VARIABLES or word in CONSTANTS:
        return 'operand'
    if word in OPERATORS:
        return 'operator'
    if word in COMPARISONS:
        return 'comparison'
    return None


@dataclass(frozen=True)
class Line:
    """One parsed line: its words and the indices of its editable words."""
    words: tuple[str, ...]
    editable: tuple[int, ...]

    @property
    def text(self) -> str:
        return ' '.join(self.words)

    @property
    def target(self) -> str | None:
        """The variable this line assigns, or None for a return."""
        return None if self.words[0] == 'return' else self.words[self.words.index('=') - 1]


def _parse_expression(words: list[str], start: int) -> list[int]:
    """Indices of an expression `X` or `X OP Y` that fills words[start:]."""
    rest = words[start:]
    if len(rest) == 1 and token_kind(rest[0]) == 'operand':
        return [start]
    if len(rest) == 3 and token_kind(rest[0]) == token_kind(rest[2]) == 'operand' and rest[1] in OPERATORS:
        return [start, start + 1, start + 2]
    raise ProgramError(f'bad expression {" ".join(rest)!r}')


def parse_line(text: str) -> Line:
    """Parse one line of the tiny language, or raise ProgramError saying why."""
    words = text.split()
    if not words:
        raise ProgramError('empty line')
    if words[0] == 'return':
        if len(words) != 2 or token_kind(words[1]) != 'operand':
            raise ProgramError(f'bad return {text!r}')
        return Line(tuple(words), (1,))
    if words[0] == 'if':
        if (len(words) < 8 or token_kind(words[1]) != 'operand' or words[2] not in COMPARISONS
                or token_kind(words[3]) != 'operand' or words[4] != 'then'):
            raise ProgramError(f'bad condition {text!r}')
        head, assign = [1, 2, 3], 5
    else:
        head, assign = [], 0
    if words[assign] not in VARIABLES or words[assign + 1:assign + 2] != ['=']:
        raise ProgramError(f'bad assignment {text!r}')
    return Line(tuple(words), tuple(head + _parse_expression(words, assign + 2)))


def parse_program(lines: list[str] | tuple[str, ...]) -> tuple[Line, ...]:
    """Parse numbered lines; the last one must be a return."""
    parsed = tuple(parse_line(text) for text in lines)
    if not 1 <= len(parsed) <= MAX_LINES or parsed[-1].target is not None:
        raise ProgramError(f'a program is 1 to {MAX_LINES} lines ending in a return')
    return parsed


def replace_token(line: Line, old: str, new: str) -> Line:
    """The line with its first editable `old` replaced by `new` of the same kind."""
    where = next((i for i in line.editable if line.words[i] == old), None)
    if where is None:
        raise ProgramError(f'no editable {old!r} in line')
    if token_kind(new) != token_kind(old):
        raise ProgramError(f'{new!r} cannot replace the {token_kind(old)} {old!r}')
    words = list(line.words)
    words[where] = new
    return parse_line(' '.join(words))


def edit_kind(word: str) -> str | None:
    """The kind of an editable word: 'variable', 'constant', 'operator', 'comparison', or None."""
    return 'constant' if word in CONSTANTS else 'variable' if word in VARIABLES else token_kind(word)


def candidate_repairs(line: Line, variables: tuple[str, ...]) -> list[tuple[str, str]]:
    """Plausible one-token edits (old, new) of a line; variables are those in scope."""
    seen, edits = set(), []
    for i in line.editable:
        old = line.words[i]
        if old in seen:
            continue
        seen.add(old)
        if old in OPERATORS:
            news = [op for op in OPERATORS if op != old]
        elif old in COMPARISONS:
            news = list(_COMPARISON_FLIPS[old])
        elif old in CONSTANTS:
            news = [str(c) for c in (int(old) - 1, int(old) + 1) if 0 <= c <= 9]
        else:
            news = [v for v in variables if v != old]
        edits += [(old, new) for new in news]
    return edits


def sample_repair(line: Line, variables: tuple[str, ...], rng) -> tuple[str, str] | None:
    """A plausible edit drawn by kind (variable, constant, operator, comparison), then token, then
    replacement, so that no kind crowds out the others; None when the line has none. rng: random.Random."""
    by_kind: dict[str, list[tuple[str, str]]] = {}
    for old, new in candidate_repairs(line, variables):
        by_kind.setdefault(edit_kind(old), []).append((old, new))
    if not by_kind:
        return None
    edits = by_kind[rng.choice(sorted(by_kind))]
    old = rng.choice(sorted({old for old, _ in edits}))
    return rng.choice([edit for edit in edits if edit[0] == old])


def _value(word: str, env: dict[str, int]) -> int:
    if word in CONSTANTS:
        return int(word)
    if word not in env:
        raise ProgramError(f'undefined {word}')
    return env[word]


def _apply(x: int, op: str, y: int) -> int:
    value = x + y if op == '+' else x - y if op == '-' else x * y
    if abs(value) > VALUE_LIMIT:
        raise ProgramError('overflow')
    return value


def _holds(x: int, cmp: str, y: int) -> bool:
    return {'<': x < y, '<=': x <= y, '>': x > y, '>=': x >= y, '==': x == y, '!=': x != y}[cmp]


def run(program: tuple[Line, ...], params: tuple[str, ...], args: tuple[int, ...]) -> tuple[int | None, list]:
    """Run a program on one input -> (returned value or None on error, trace of per-line states)."""
    env, trace = dict(zip(params, args)), []
    try:
        for line in program:
            w = line.words
            if w[0] == 'return':
                value = _value(w[1], env)
                trace.append(('return', value))
                return value, trace
            if w[0] == 'if' and not _holds(_value(w[1], env), w[2], _value(w[3], env)):
                trace.append(('skip',))
                continue
            expr = w[w.index('=') + 1:]
            value = _value(expr[0], env) if len(expr) == 1 else _apply(_value(expr[0], env), expr[1],
                                                                       _value(expr[2], env))
            env[line.target] = value
            trace.append(('set', value))
    except ProgramError as error:
        trace.append(('error', str(error)))
    return None, trace


def first_difference(trace: list, reference: list) -> int:
    """Index of the first line whose state differs between two traces of one input."""
    for i, (state, ref) in enumerate(zip(trace, reference)):
        if state != ref:
            return i
    return min(len(trace), len(reference)) - 1

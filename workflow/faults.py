"""What a user got wrong, one line each: a design's faults against its JSON schema, and a name its design lacks.

A fault names the key path, the value and what is allowed (`seeds.max = -5: at least 2`); an unknown key or name
comes with its close matches (difflib): `baseline.lamda: unknown key; did you mean lam?`. Where the schema offers
branches (`oneOf`: a list of seeds or a mapping), the branch of the value's type says what is wrong.

A command's fault is one line too: OneLineParser's errors are `PROG: error: MESSAGE`, without the usage argparse
prints before it.

A design file that is not YAML is one line naming the file and the line (`config/x.yaml:7: could not parse YAML:
...`).

Pure Python (jsonschema, difflib, PyYAML): workflow/design.py and the Snakefile's helpers import it.
"""
from __future__ import annotations

import argparse
import difflib
import json
from collections.abc import Iterable
from typing import NoReturn

import yaml
from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError

from workflow.plan import DesignError

TYPE_WORDS = {'integer': 'an integer', 'number': 'a number', 'string': 'a string', 'boolean': 'true or false',
              'null': 'null', 'array': 'a list', 'object': 'a mapping'}
BRANCHING = ('oneOf', 'anyOf')


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors (a bad or missing argument, or a fault the command passes to error) are one line
    each, `PROG: error: MESSAGE`, exit status 2; `--help` gives the usage."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f'{self.prog}: error: {message}\n')


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """'; did you mean A, B or C?' for the choices close to word (difflib), closest first; '' where none is."""
    close = difflib.get_close_matches(word, list(choices))
    return f'; did you mean {either(close)}?' if close else ''


def either(words: list[str]) -> str:
    """`a`, `a or b`, `a, b or c`."""
    return f'{", ".join(words[:-1])} or {words[-1]}' if len(words) > 1 else words[0]


def not_in_design(kind: str, name: str, known: Iterable[str]) -> str:
    """'<kind> NAME is not in this design', then its close matches, or every name of the kind where none is close."""
    known = list(known)
    return f'{kind} {name} is not in this design' + (did_you_mean(name, known) or f'; it has: {", ".join(known)}')


def yaml_fault(source: str, error: yaml.YAMLError) -> str:
    """A YAML file's syntax error as one line: `SOURCE:LINE: could not parse YAML: PROBLEM (CONTEXT, line N)`."""
    mark = getattr(error, 'problem_mark', None)
    if mark is None:
        return f'{source}: could not parse YAML: {" ".join(str(error).split())}'
    context = f' ({error.context}, line {error.context_mark.line + 1})' if error.context and error.context_mark else ''
    return f'{source}:{mark.line + 1}: could not parse YAML: {error.problem}{context}'


# --- validation: defaults filled in, every fault collected ---------------------------------------

def fill_defaults(validator, properties: dict, instance, schema: dict):
    """jsonschema's `properties`, after filling in the default of each property the mapping lacks."""
    if validator.is_type(instance, 'object'):
        for name, fragment in properties.items():
            if 'default' in fragment:
                instance.setdefault(name, fragment['default'])
    yield from Draft202012Validator.VALIDATORS['properties'](validator, properties, instance, schema)


DefaultingValidator = validators.extend(Draft202012Validator, {'properties': fill_defaults})


def validated(design: dict, schema: dict) -> dict:
    """The design with the schema's defaults filled in (in place); a DesignError of one line per fault."""
    validator = DefaultingValidator(schema)
    lines = [line for error in validator.iter_errors(design) for line in fault_lines(error, validator)]
    if lines:
        raise DesignError('\n'.join(dict.fromkeys(lines)))  # one line per fault, in the schema's order
    return design


# --- one error of the tree, as lines -----------------------------------------------------------

def fault_lines(error: ValidationError, validator) -> list[str]:
    """The lines of one error: a branching error's from the branch of the value's type, an unknown key's with its close
    matches, any other's `path = value: what is allowed`."""
    if error.validator in BRANCHING and (branch := chosen_branch(error, validator)) is not None:
        return [line for sub in branch for line in fault_lines(sub, validator)]
    if error.validator == 'additionalProperties' and error.validator_value is False:
        known = error.schema.get('properties', {})
        return [unknown_key(error.absolute_path, key, known) for key in error.instance if key not in known]
    if 'propertyNames' in error.relative_schema_path:  # the key itself (error.instance) is not allowed
        return [unknown_key(error.absolute_path, error.instance, error.validator_value)]
    if error.validator == 'required':
        return [f'{key_path([*error.absolute_path, key])}: missing (a required key)'
                for key in error.validator_value if key not in error.instance]
    return [f'{key_path(error.absolute_path)} = {json.dumps(error.instance)}: {allowed(error)}']


def chosen_branch(error: ValidationError, validator) -> list[ValidationError] | None:
    """The errors of the one branch (of oneOf or anyOf) whose type the value has; None where no branch or several
    have it."""
    fitting = [index for index, branch in enumerate(error.validator_value)
               if any(validator.is_type(error.instance, kind) for kind in json_types(branch))]
    if len(fitting) != 1:
        return None
    errors = [sub for sub in error.context if sub.relative_schema_path[0] == fitting[0]]
    return errors or None


def json_types(schema: dict) -> set[str]:
    """The JSON type names a schema fragment allows."""
    kind = schema.get('type', [])
    return {kind} if isinstance(kind, str) else set(kind)


def type_words(kinds: Iterable[str]) -> str:
    """JSON type names as words, in TYPE_WORDS' order: `a number or null`."""
    return ' or '.join(TYPE_WORDS[kind] for kind in sorted(set(kinds), key=list(TYPE_WORDS).index))


def unknown_key(path, key: str, known: Iterable[str]) -> str:
    """`path.key: unknown key`, then its close matches among the keys known there, or all of them where none is close."""
    known = list(known)
    hint = did_you_mean(key, known) or f'; the keys are: {", ".join(known)}'
    return f'{key_path([*path, key])}: unknown key{hint}'


def key_path(path) -> str:
    """A path into the design as the file spells it: `sweeps.lam[1]`; `the design` for its root."""
    text = ''.join(f'[{part}]' if isinstance(part, int) else f'.{part}' for part in path).lstrip('.')
    return text or 'the design'


def allowed(error: ValidationError) -> str:
    """What the schema allows where the value broke one keyword: `at least 2`, `an integer`, `one of epoch, minibatch`."""
    bound, value = error.validator_value, error.instance
    match error.validator:
        case 'minimum':
            return f'at least {bound}'
        case 'maximum':
            return f'at most {bound}'
        case 'exclusiveMinimum':
            return f'more than {bound}'
        case 'exclusiveMaximum':
            return f'less than {bound}'
        case 'type':
            return type_words(json_types(error.schema))
        case 'enum':
            hint = did_you_mean(value, map(str, bound)) if isinstance(value, str) else ''
            return f'one of {", ".join(map(str, bound))}{hint}'
        case 'minItems':
            return f'at least {bound} item{"s" * (bound != 1)}'
        case 'uniqueItems':
            return 'each item once'
        case 'minLength':
            return f'at least {bound} character{"s" * (bound != 1)}'
        case 'minProperties':
            return f'at least {bound} keys'
        case 'oneOf' | 'anyOf':
            return type_words(kind for branch in bound for kind in json_types(branch))
    return error.message

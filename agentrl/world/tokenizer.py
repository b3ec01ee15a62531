"""A word-level tokenizer over the tasks' text and the tool language."""
from __future__ import annotations

import hashlib

from .lang import COMPARISONS, CONSTANTS, KEYWORDS, MAX_LINES, OPERATORS, VARIABLES

PAD, BOS, EOT, UNK = '<pad>', '<bos>', '<eot>', '<unk>'
SPECIALS = (PAD, BOS, EOT, UNK)

VERBS = ('test', 'edit', 'submit')
LINE_REFS = tuple(f'L{i}' for i in range(1, MAX_LINES + 1))
# Words of the environment's answers (see env.py).
TOOL_WORDS = ('fix', ':', 'fail', 'pass', 'ok', 'error', 'verb', 'line', 'parse', 'token', 'kind',
              'empty', 'long')
# A failing test's input, one word per parameter ('a=3'): no digit token, so the line's constants stand alone.
INPUT_WORDS = tuple(f'{name}={value}' for name in ('a', 'b', 'c') for value in CONSTANTS)
TOOL_LANGUAGE = (VERBS + LINE_REFS + TOOL_WORDS + INPUT_WORDS + KEYWORDS + VARIABLES + CONSTANTS + OPERATORS
                 + COMPARISONS)


class Tokenizer:
    """Maps whitespace-separated words to ids; unknown words map to `unk_id`."""

    def __init__(self, words: list[str]):
        self.vocab = list(dict.fromkeys(SPECIALS + tuple(words)))
        self.ids = {word: i for i, word in enumerate(self.vocab)}
        self.pad_id, self.bos_id, self.eot_id, self.unk_id = (self.ids[w] for w in SPECIALS)

    def __len__(self) -> int:
        return len(self.vocab)

    def encode(self, text: str) -> list[int]:
        return [self.ids.get(word, self.unk_id) for word in text.split()]

    def decode(self, ids: list[int]) -> str:
        return ' '.join(self.vocab[i] for i in ids)

    @property
    def fingerprint(self) -> str:
        """A hash of the vocabulary, for cache keys."""
        return hashlib.sha256('\n'.join(self.vocab).encode()).hexdigest()[:16]


def build_tokenizer(tasks) -> Tokenizer:
    """The tool language, then every word of the tasks' prompts, in first-seen order."""
    return Tokenizer(list(TOOL_LANGUAGE) + [word for task in tasks for word in task.prompt.split()])

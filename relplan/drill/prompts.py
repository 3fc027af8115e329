"""Prompts and output lengths (docs/drill.md, Prompts).

A length is `N` (fixed), `uniform:LO-HI` (integers, both ends included) or
`normal:MEAN:SD` (rounded, at least 1). A prompt is the shared prefix (`prefix` words, the
same for every call: a system prompt the prefix cache may keep) followed by fresh random
words up to the prompt length, drawn per call, so the prefix cache cannot serve the rest and
inflate throughput. Words are counted as tokens: a word of the list below is one token for a
word-level tokenizer and about one for BPE tokenizers; the exact prompt_tokens come from the
response's usage and go into the attempt log.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from relplan.errors import UsageError

WORDS = [
    "time",
    "year",
    "people",
    "way",
    "day",
    "man",
    "thing",
    "woman",
    "life",
    "child",
    "world",
    "school",
    "state",
    "family",
    "student",
    "group",
    "country",
    "problem",
    "hand",
    "part",
    "place",
    "case",
    "week",
    "company",
    "system",
    "program",
    "question",
    "work",
    "government",
    "number",
    "night",
    "point",
    "home",
    "water",
    "room",
    "mother",
    "area",
    "money",
    "story",
    "fact",
    "month",
    "lot",
    "right",
    "study",
    "book",
    "eye",
    "job",
    "word",
    "business",
    "issue",
    "side",
    "kind",
    "head",
    "house",
    "service",
    "friend",
    "father",
    "power",
    "hour",
    "game",
    "line",
    "end",
    "member",
    "law",
    "car",
    "city",
    "community",
    "name",
    "president",
    "team",
    "minute",
    "idea",
    "kid",
    "body",
    "information",
    "back",
    "parent",
    "face",
    "others",
    "level",
    "office",
    "door",
    "health",
    "person",
    "art",
    "war",
    "history",
    "party",
    "result",
    "change",
    "morning",
    "reason",
    "research",
    "girl",
    "guy",
    "moment",
    "air",
    "teacher",
    "force",
    "education",
    "foot",
    "boy",
    "age",
    "policy",
    "process",
    "music",
    "market",
    "sense",
    "nation",
    "plan",
    "college",
    "interest",
    "death",
    "experience",
    "effect",
    "use",
    "class",
    "control",
    "care",
    "field",
    "development",
    "role",
    "effort",
    "rate",
    "heart",
    "drug",
    "show",
    "leader",
    "light",
    "voice",
    "wife",
    "police",
    "mind",
    "price",
    "report",
    "decision",
    "son",
    "view",
    "relationship",
    "town",
    "road",
    "arm",
    "difference",
    "value",
    "building",
    "action",
    "model",
    "season",
    "society",
    "tax",
    "director",
    "position",
    "player",
    "record",
    "paper",
    "space",
    "ground",
    "form",
    "event",
    "official",
    "matter",
    "center",
    "couple",
    "site",
    "project",
    "activity",
    "star",
    "table",
    "need",
    "court",
    "oil",
    "situation",
    "cost",
    "industry",
    "figure",
    "street",
    "image",
    "phone",
    "data",
]

_UNIFORM = re.compile(r"uniform:(\d+)-(\d+)")
_NORMAL = re.compile(r"normal:(\d+(?:\.\d+)?):(\d+(?:\.\d+)?)")


@dataclass(frozen=True)
class Lengths:
    kind: str  # fixed | uniform | normal
    a: float
    b: float = 0.0

    def draw(self, rng: random.Random) -> int:
        if self.kind == "fixed":
            return int(self.a)
        if self.kind == "uniform":
            return rng.randint(int(self.a), int(self.b))
        return max(1, round(rng.gauss(self.a, self.b)))

    @property
    def mean(self) -> float:
        return (self.a + self.b) / 2 if self.kind == "uniform" else self.a

    def text(self) -> str:
        if self.kind == "fixed":
            return f"{self.a:g}"
        if self.kind == "uniform":
            return f"uniform:{self.a:g}-{self.b:g}"
        return f"normal:{self.a:g}:{self.b:g}"


def parse_lengths(text: str, flag: str) -> Lengths:
    s = text.strip()
    if s.isdigit() and int(s) > 0:
        return Lengths("fixed", float(s))
    if m := _UNIFORM.fullmatch(s):
        lo, hi = int(m[1]), int(m[2])
        if 0 < lo <= hi:
            return Lengths("uniform", lo, hi)
    if (m := _NORMAL.fullmatch(s)) and float(m[1]) > 0:
        return Lengths("normal", float(m[1]), float(m[2]))
    raise UsageError(
        flag, f"{text!r}: expected N, uniform:LO-HI or normal:MEAN:SD (positive token counts)"
    )


def prefix_words(n: int) -> list[str]:
    """The shared prefix: the same `n` words for every call of every drill."""
    rng = random.Random(0)
    return [rng.choice(WORDS) for _ in range(n)]


def make_prompt(prefix: list[str], length: int, rng: random.Random) -> str:
    """The prefix, then fresh random words up to `length` words in all (at least one fresh)."""
    fresh = max(1, length - len(prefix))
    return " ".join([*prefix, *(rng.choice(WORDS) for _ in range(fresh))])

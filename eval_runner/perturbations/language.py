"""The language axis: the instruction the policy reads, rewritten from fixed templates.

Level 1 paraphrases it (the same objects and places, other verbs and a framing sentence), level 2 blanks
it, level 3 replaces it with an instruction that has nothing to do with the scene (LIBERO-PRO's test of
whether a policy reads its instruction at all). The templates are fixed here, so a rewrite depends only
on the instruction and the episode's generator.
"""

from __future__ import annotations

import re

import numpy as np

__all__ = ["IRRELEVANT", "paraphrase", "rewrite"]

#: Verb phrases of LIBERO's instructions and their synonyms (whole words, lower case, longest first).
SYNONYMS = (
    ("pick up", "grab"),
    ("put", "set"),
    ("place", "set"),
    ("turn on", "switch on"),
    ("turn off", "switch off"),
    ("open", "pull open"),
    ("close", "shut"),
    ("push", "slide"),
    ("stack", "pile"),
)
#: Sentences around the (verb-swapped) instruction; the first keeps it as it is.
FRAMES = ("{}", "please {}", "{}, please", "could you {}?", "your task is to {}", "now {}")
#: Instructions unrelated to any LIBERO scene.
IRRELEVANT = (
    "tell me a joke about the weather",
    "count from one to ten out loud",
    "wave at the camera",
    "describe the colour of the sky",
    "stand still and wait for the next command",
    "sing a short song about robots",
)


def paraphrase(instruction: str, rng: np.random.Generator) -> str:
    """The instruction with its verbs swapped for synonyms, in a drawn framing sentence; never the original."""
    text = instruction.strip().rstrip(".").lower()
    swapped = text
    for phrase, synonym in SYNONYMS:
        swapped = re.sub(rf"\b{phrase}\b", synonym, swapped)
    frames = FRAMES if swapped != text else FRAMES[1:]  # no verb to swap: the framing must change it
    return frames[int(rng.integers(len(frames)))].format(swapped)


def rewrite(instruction: str, level: int, rng: np.random.Generator) -> tuple[str, str]:
    """(the instruction of ``level``, the kind of rewrite): 1 paraphrase, 2 blank, 3 irrelevant."""
    if level == 1:
        return paraphrase(instruction, rng), "paraphrase"
    if level == 2:
        return "", "blank"
    return IRRELEVANT[int(rng.integers(len(IRRELEVANT)))], "irrelevant"

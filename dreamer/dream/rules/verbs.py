"""Verb forms of a reported or requested action: past and -ing forms, imperatives, generic verbs."""

from __future__ import annotations

IRREGULAR = {
    "wrote": "writing",
    "built": "building",
    "ran": "running",
    "made": "making",
    "set": "setting",
    "read": "reading",
    "sent": "sending",
    "found": "finding",
    "drew": "drawing",
    "did": "doing",
    "took": "taking",
    "gave": "giving",
    "led": "leading",
    "taught": "teaching",
    "bought": "buying",
    "paid": "paying",
    "met": "meeting",
    "fought": "fighting",
    "spent": "spending",
}

# An irregular past after one of these is the same verb's past: "rewrote", "proofread", "unset".
PREFIXES = ("re", "un", "pre", "mis", "over", "under", "proof")

NOT_VERBS = frozenset(
    {
        "need",
        "seed",
        "feed",
        "speed",
        "red",
        "bed",
        "shed",
        "embed",
        "bing",
        "thing",
        "ring",
        "king",
        "spring",
        "string",
        "morning",
        "evening",
        "nothing",
        "something",
        "anything",
        "everything",
        "ceiling",
        "building",
        "meeting",
        "wedding",
        "pudding",
        "during",
        "interesting",
        "ongoing",
        "upcoming",
        "pending",
        "hundred",
        "bored",
        "tired",
        "scared",
        "excited",
        "worried",
        "pleased",
        "user",
        "agent",
        "again",
    }
)

# Verbs of looking, asking or doing in general: repeated, they name no skill ("Checking logs").
GENERIC = frozenset(
    {
        "checking",
        "looking",
        "running",
        "doing",
        "making",
        "getting",
        "seeing",
        "showing",
        "trying",
        "using",
        "telling",
        "explaining",
        "finding",
        "giving",
        "taking",
        "going",
        "letting",
        "keeping",
        "helping",
        "starting",
        "working",
    }
)


def _irregular(word: str) -> str | None:
    if word in IRREGULAR:
        return IRREGULAR[word]
    for prefix in PREFIXES:
        rest = word[len(prefix) :]
        if word.startswith(prefix) and rest in IRREGULAR:
            return prefix + IRREGULAR[rest]
    return None


def gerund(word: str) -> str | None:
    """'deployed' -> 'deploying', 'debugging' -> 'debugging'; None if not a verb form."""
    word = word.lower()
    if word in NOT_VERBS or len(word) < 4:
        return None
    if (found := _irregular(word)) is not None:
        return found
    if word.endswith("ing"):
        return word
    if word.endswith("ied"):
        return word[:-3] + "ying"
    if word.endswith("ed"):
        return word[:-2] + "ing" if not word.endswith("eed") else None
    return None


def imperative_gerunds(word: str) -> tuple[str, ...]:
    """The -ing forms a bare verb may take ('bump' -> 'bumping', 'update' -> 'updating',
    'format' -> 'formatting'); which one is right is left to a past form seen elsewhere."""
    word = word.lower()
    if len(word) < 3 or not word.isalpha() or word in NOT_VERBS or word.endswith(("ing", "ed")):
        return ()
    if (found := _irregular(word)) is not None:
        return (found,)
    forms = [word + "ing"]
    if word.endswith("e") and not word.endswith("ee"):
        forms.append(word[:-1] + "ing")
    if word[-1] not in "aeiouwxy" and word[-2] in "aeiou":
        forms.append(word + word[-1] + "ing")
    return tuple(forms)

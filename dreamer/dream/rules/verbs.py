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


# Verbs a one-off step of work opens with ("Run the API tests.", "Add that date filter.").
TASKS = frozenset(
    "run add fix check format rename list explain bump update clean start stop show look open "
    "create make remove delete refactor split move regenerate test build deploy review tidy "
    "find search try install merge push commit rebase revert migrate backfill proofread "
    "translate summarise summarize draft turn convert generate implement port debug "
    "investigate profile measure document read rerun retry restart drop truncate refresh "
    "reindex sort print count compare diff lint reformat rewrite edit change replace upgrade "
    "downgrade pin unpin tag release publish ship send email post close reopen label assign "
    "write scaffold stub mock seed load export import dump inspect trace grep tail".split()
)
_OPENERS = ("please", "can you", "could you", "would you", "let's", "now", "ok", "okay", "then")


def task(text: str) -> bool:
    """Whether ``text`` opens as a request for one step of work (in English: its first word,
    after "please" or "can you", a verb of ``TASKS``, or a slash command)."""
    words = text.strip().lower().replace(",", " ").split()
    for opener in _OPENERS:
        parts = opener.split()
        if words[: len(parts)] == parts:
            words = words[len(parts) :]
    if not words:
        return False
    first = words[0].strip(".:;!?")
    # a slash command ("/wordcount manuscript"); "spell-check" is a kind of "check"
    return first.startswith("/") or first.rsplit("-", 1)[-1] in TASKS

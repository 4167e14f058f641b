"""A rule the assistant proposed and the user confirmed: the user's own, in the assistant's words.

In a session the assistant often offers a standing habit ("Want me to always run ruff before
committing?", "From now on I'll squash the merges.") and the user only says "yes, always". The
offer alone establishes nothing (a promise, dropped), and "yes, always" alone says nothing; the
pair is a rule the user set. Read from the user's short reply to the answer just before it.
"""

from __future__ import annotations

import re

from dreamer.memory.provenance import instruction_shaped, sentences

REPLY_WORDS = 12  # a confirmation is short: a longer reply says its own thing
BARE_WORDS = 4  # "yes, from now on": a yes and no more
_CONFIRM = re.compile(
    r"^\W*(?:yes|yep|yeah|yup|sure|agreed|exactly|correct|please do|do that|go ahead|"
    r"sounds good|ok(?:ay)?|perfect|definitely|absolutely|ja|genau|oui|d'accord|sí|si|sim|"
    r"tak|да|はい|好的|是的|네)\b",
    re.IGNORECASE,
)
_OFFER = re.compile(
    r"^(?:(?:so|then|and),?\s+)?(?:do you want me to|would you like me to|want me to|"
    r"should i|shall i|should we|shall we|i suggest(?: that)?(?: we)?|i'd suggest(?: we)?|"
    r"i recommend(?: that)?(?: we)?|i'd recommend(?: we)?|i propose(?: that)?(?: we)?|"
    r"how about we|(?:going forward|from now on|in future),? (?:i'll|i will|we'll|we will)|"
    r"i'll|i will)\s+(?P<rule>.+?)\s*[?.!]*$",
    re.IGNORECASE,
)


def bare_reply(prompt: str) -> bool:
    """Whether ``prompt`` is only a yes worded like a rule ("yes, always", "sure, from now on"):
    it sets nothing on its own."""
    short = len(prompt.split()) <= BARE_WORDS
    return short and bool(_CONFIRM.match(prompt)) and instruction_shaped(prompt)


def confirmed_rule(reply: str, answer_before: str) -> str | None:
    """The standing rule ``reply`` confirms of the assistant's offer in ``answer_before``
    (its last offer of a habit, "always …", "from now on …"), as a sentence; None when the
    reply is no short yes or the answer offered no standing rule."""
    if not reply or len(reply.split()) > REPLY_WORDS or not _CONFIRM.match(reply):
        return None
    for sentence in reversed(sentences(answer_before)):
        offer = _OFFER.match(sentence)
        if offer and (instruction_shaped(sentence) or instruction_shaped(reply)):
            rule = offer.group("rule").rstrip(" ,;:")
            return f"{rule[0].upper()}{rule[1:]}."
    return None

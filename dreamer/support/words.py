"""English words as the engine reads them: the tokenisers, the stemmer and every stop-word list.

``STOP_WORDS`` is the list a reader starts from: English function words (NLTK's English list
without the pieces a split at an apostrophe leaves). A reader that needs another list uses one
of the named exceptions below, each built from these sets and saying why it differs; no other
module keeps a list of its own.
"""

from __future__ import annotations

import functools
import re

STEM_CACHE = 65536

WORD = re.compile(r"[^\W_]+", re.UNICODE)
"""A word for search and vectors: a run of letters and digits ("don't" is "don" and "t")."""

NOTE_WORD = re.compile(r"[^\W_][\w'’-]*[^\W_]|[^\W_]", re.UNICODE)
"""A word of a note or a state line: apostrophes and hyphens inside it stay ("don't", "e-mail")."""

_COMMONEST = frozenset(
    "a an and are as at be been but by did do does for from had has have he her him his how i if "
    "in into is it its me my of on or our she so than that the their them then there these they "
    "this to was we were what when where which who why will with you your".split()
)

STOP_WORDS = _COMMONEST | frozenset(
    "about above after again against all am any because before being below between both can "
    "could doing down during each few further having here hers herself himself itself just more "
    "most myself no nor not now off once only other ours ourselves out over own same should some "
    "such theirs themselves those through too under until up very while whom would yours "
    "yourself yourselves".split()
)
"""English function words: matching them ranks or compares by noise, not meaning."""

CONTRACTION_PIECES = frozenset("d don ll m o re s t ve y".split())
"""What a split at an apostrophe leaves of a contraction ("don't" -> "don", "t")."""

QUERY_STOP_WORDS = STOP_WORDS | CONTRACTION_PIECES
"""Left out of a search query: the search splits words at apostrophes (``WORD``)."""

EMBEDDING_STOP_WORDS = _COMMONEST
"""Left out of a hashing vector: only the commonest function words. Every stored vector was made
without exactly these, so a change to this list changes what old and new vectors mean."""

NOTE_STOP_WORDS = STOP_WORDS | frozenset(
    "agent already also asked day days done else even ever first get gets going got last let "
    "lets like made make maybe much must need needs new next one per please really said says "
    "still thing things three time times today told tomorrow two upon us use user users via "
    "want wanted wants week weeks within without yesterday yet".split()
)
"""Left out of a note's content words (``keywords``): besides function words, the words every
agent's notes are full of (who, when, saying and wanting), which tell no two notes apart."""

RESTATEMENT_STOP_WORDS = frozenset(
    "the and for are was were with that this from have has had not but you your our their "
    "they she him her his its into about over than then them what when where which while "
    "will would could should been being also just more most some such very".split()
)
"""Left out when a forget asks whether a line restates a forgotten text, or a logged search
names one (``dreamer.memory.forgetting``): the commonest words of three letters or more. A
wider list would scrub other lines and drop other searches than the forgets so far did."""

SECRET_STOP_WORDS = frozenset(
    """a an the in on at to from for of by with via into inside under over is are was be been
    being it its this that these those my our your their his her not no none null nil empty blank
    unset undefined required optional needed mandatory missing wrong incorrect correct invalid
    valid expired expiring same different too very still now also only just there here available
    unavailable unknown tbd todo hidden redacted masked stored kept saved managed set changed
    reset rotated updated generated provided configured defined given shown printed logged leaked
    compromised weak strong long short secure insecure ok okay fine good bad new old default true
    false yes see check ask use using somewhere elsewhere rotate rotating change changing update
    updating revoke revoked please n/a na case-sensitive read-only short-lived long-lived
    per-user per-project hardcoded hard-coded encrypted hashed plaintext plain-text
    str bytes string text int bool any object secretstr password passwd pwd pw pass token secret
    key apikey api_key user username login name value creds credentials auth
    and or but then so if when while field fields form box""".split()
)
"""Never a secret's value: a word that describes a secret or its absence ("the password is
required", "token: none", ``password: str``). Secret detection keeps its own list because each
word here is one a value may not be, and a word missing from it is a secret let through."""

SECRET_PROSE_WORDS = frozenset(
    """a an the in on at to from for of by with via into is are was were be been it its this
    that these those my our your their his her not no and or but if then than so as required
    needed stored kept saved managed set changed reset rotated updated generated provided
    configured shown printed written sentence words word characters chars long""".split()
)
"""Words that make a passphrase of three words or more a sentence about one ("the passphrase is
stored in the vault"), not the passphrase itself."""


DETERMINERS = frozenset(
    "the a an our my their his her its this that these those some all two three every each up "
    "out".split()
)
"""Words that open a noun phrase: after a word in -ing one of these makes it a verb ("Reviewing
the PR"), for the skills a note reports."""

PREPOSITIONS = frozenset(
    "with for from to in on at by of into after before about between during against via "
    "while because so".split()
)
"""Words that end the object of an action ("refactored the payments module for Ada")."""

KEEP_RULE_STOP_WORDS = frozenset(
    "a an the any all anything everything something thing things stuff item items detail details "
    "note notes fix fixes fixed chore chores talk talks discussion discussions matter matters "
    "work task tasks update updates change changes issue issues info information about of on "
    "for with who what which is are was were this that these those week weeks day days today "
    "my our your his her their its it them it's in to by from at keep keeping".split()
)
"""Words of a keep or drop rule ("always keep anything about the move") that name nothing, so
the rule's groups are its other words."""

FORGET_STOP_WORDS = frozenset(
    "a an the my our your his her their this that these those it its i me we you he she they "
    "about of on in at to for from with by and or please pls kindly again ever earlier before "
    "previously yesterday today last week just now above here there what which who all any "
    "some everything anything thing things stuff note notes memory memories mention mentioned "
    "said told wrote written write pasted paste shared gave given sent typed put had have has "
    "was were is are be been did do does remember remembering keep keeping".split()
)
"""Words of a forget request that say how or when something was written, not what it was
("forget what I told you about my weight" asks for "weight")."""


FORGET_ASKING_WORDS = frozenset(
    "scrap drop remove delete erase purge wipe discard let go rather would prefer prefers want "
    "wants like kept keep stay stored store record trace down anywhere actually should shouldn "
    "never none told mentioned wrote noted shared bit us after says say thinks think asks asked "
    "agent ok so don won isn wasn want wanted stuff any more anymore no not tell stayed stays "
    "stick sticks around linger lingers remain remains didn him them".split()
)
"""Words of asking, not of what is asked about ("I'd rather you didn't keep the bit about my
salary" asks for "salary"): left out of the target of a request said in other words."""


@functools.lru_cache(maxsize=STEM_CACHE)
def stem(word: str) -> str:
    """A light English stem of a lower-case word ("deploying" -> "deploy")."""
    for suffix in ("ingly", "edly", "ings", "ing", "ied", "ies", "ed", "es", "ly", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def words(text: str) -> list[str]:
    """The words (``WORD``) of text, lower-cased, in order."""
    return WORD.findall(text.lower())


def keywords(text: str) -> list[str]:
    """The content words of text, lower-cased, in first-seen order, stop words removed."""
    out: dict[str, None] = {}
    for word in NOTE_WORD.findall(text.lower()):
        word = word.strip("'’-")
        if len(word) < 3 or word in NOTE_STOP_WORDS or word.isdigit():
            continue
        out[word] = None
    return list(out)


def stems(text: str) -> set[str]:
    """Stemmed content words of text, for overlap tests."""
    return {stem(word) for word in keywords(text)}

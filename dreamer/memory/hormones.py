"""The agent's simulated hormones: dopamine, cortisol and oxytocin, each a level from 0 to 1.

Levels are never ticked down by a timer; they are *computed* from the stored history. Every
stimulus (``feel``) stores a row in the ``hormones`` table with all three levels right after it.
The level of hormone ``h`` at time ``now`` is then::

    level(now) = rest[h] + (last[h] - rest[h]) * 0.5 ** (minutes since last row / half_life[h])

where ``last`` is the newest row at or before ``now`` (no row: every hormone is at rest).
Resting levels and half-lives come from the settings (``memory.hormones.<name>.rest`` and
``.halfLifeMinutes``; defaults 0.15/0.02/0.20 and 30/60/45 minutes).

Stimuli come from ``dream feel``, the Python API, and the text of incoming agent notes through a
small lexicon (``stimuli_from_text``). The default lexicon is ``DEFAULT_LEXICON``; a workspace can
replace it with ``memory/lexicon.json`` in the same shape::

    {"dopamine": {"delta": 0.3, "reason": "achievement/breakthrough detected",
                  "words": ["breakthrough", "solved", "ship*"]}, ...}

A word ending in ``*`` matches any word starting with it; matching ignores case. One note gives
at most one stimulus per hormone, however many of its words match.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from datetime import datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from dreamer.config import HORMONES
from dreamer.errors import InvalidStimulus
from dreamer.store.kinds import STIMULUS_SOURCES
from dreamer.support.encoding import require_utf8
from dreamer.support.secrets import redact
from dreamer.support.times import as_utc, iso, parse_iso, utc_now

if TYPE_CHECKING:
    from dreamer.memory.parts import Parts

SPIKE_THRESHOLD = 0.7

DEFAULT_LEXICON: dict[str, dict[str, Any]] = {
    "dopamine": {
        "delta": 0.3,
        "reason": "achievement/breakthrough detected",
        "words": [
            "achiev*",
            "breakthrough*",
            "success*",
            "succeeded",
            "solved",
            "shipped",
            "launched",
            "milestone*",
            "finally works",
            "it works",
            "nailed",
            "won",
            "passed",
            "accomplish*",
            "promoted",
            "celebrat*",
        ],
    },
    "cortisol": {
        "delta": 0.3,
        "reason": "error/urgency detected",
        "words": [
            "error*",
            "fail*",
            "crash*",
            "bug",
            "bugs",
            "broken",
            "outage*",
            "urgent*",
            "asap",
            "deadline*",
            "emergency",
            "critical",
            "frustrat*",
            "stuck",
            "blocked",
            "angry",
            "annoyed",
            "panic*",
        ],
    },
    "oxytocin": {
        "delta": 0.25,
        "reason": "gratitude/personal sharing detected",
        "words": [
            "thank*",
            "grateful",
            "gratitude",
            "appreciat*",
            "my wife",
            "my husband",
            "my partner",
            "my daughter",
            "my son",
            "my kids",
            "my family",
            "my mom",
            "my dad",
            "my friend*",
            "i feel",
            "i'm feeling",
            "personal*",
            "love",
        ],
    },
}

Stimulus = tuple[str, float, str]


def rest_levels(ws: Parts) -> dict[str, float]:
    """The resting level of each hormone from the workspace settings."""
    return {name: float(ws.settings.hormone_rest[name]) for name in HORMONES}


def decay(ws: Parts, last: Mapping[str, float], since: datetime, now: datetime) -> dict[str, float]:
    """Levels ``last`` (as of ``since``) decayed toward rest until ``now``."""
    minutes = max(0.0, (as_utc(now) - as_utc(since)).total_seconds() / 60.0)
    out = {}
    for name in HORMONES:
        rest = float(ws.settings.hormone_rest[name])
        half_life = float(ws.settings.hormone_half_life_minutes[name])
        level = rest + (float(last[name]) - rest) * 0.5 ** (minutes / half_life)
        out[name] = round(_clamp(level), 6)
    return out


def _clamp(value: float) -> float:
    return min(1.0, max(0.0, value))


def levels(ws: Parts, now: datetime) -> dict[str, float]:
    """Each hormone's level at ``now``: the newest stored levels decayed toward rest."""
    row = ws.store.hormones.hormones_at(iso(now))
    if row is None:
        return rest_levels(ws)
    last = dict(zip(HORMONES, row[1:], strict=True))
    return decay(ws, last, parse_iso(row[0]), now)


def feel(
    ws: Parts,
    hormone: str,
    delta: Any,
    reason: str = "",
    now: datetime | None = None,
    *,
    source: str = "api",
) -> dict[str, float]:
    """Apply a stimulus (level += delta, clamped to 0..1), store it, and return all levels."""
    if hormone not in HORMONES:
        raise InvalidStimulus(f"unknown hormone {hormone!r}; use one of {', '.join(HORMONES)}")
    delta = _as_delta(delta)
    if source not in STIMULUS_SOURCES:
        raise InvalidStimulus(
            f"unknown stimulus source {source!r}; use one of {', '.join(STIMULUS_SOURCES)}"
        )
    require_utf8(reason or "", "reason", InvalidStimulus)
    moment = as_utc(now or utc_now())
    if ws.settings.redact_secrets:  # a reason is free text: it passes the door like a note
        reason = redact(reason).text
    current = levels(ws, moment)
    current[hormone] = _clamp(current[hormone] + delta)
    _store(ws, current, moment, hormone, delta, reason or "", source)
    return current


def _as_delta(value: Any) -> float:
    """A stimulus size: a number (or numeric text) from -1 to 1."""
    wrong = InvalidStimulus(
        f"delta must be a number from -1 to 1 (e.g. 0.3 or -0.2), not {value!r}"
    )
    if isinstance(value, bool):
        raise wrong
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise wrong from None
    if not isinstance(value, int | float) or math.isnan(value) or not -1.0 <= value <= 1.0:
        raise wrong
    return float(value)


def record(ws: Parts, now: datetime, reason: str = "decay") -> dict[str, float]:
    """Store the decayed levels at ``now`` as a history row (the consolidation tick does this)."""
    current = levels(ws, now)
    _store(ws, current, as_utc(now), None, None, reason, "decay")
    return current


def _store(
    ws: Parts,
    current: Mapping[str, float],
    moment: datetime,
    hormone: str | None,
    delta: float | None,
    reason: str,
    source: str,
) -> None:
    ws.store.hormones.add_hormone_row(moment, current, hormone, delta, reason, source)


def history(ws: Parts, limit: int = 20, *, stimuli_only: bool = False) -> list[dict[str, Any]]:
    """The newest history rows (stimuli, and decay snapshots unless stimuli_only), newest first."""
    return ws.store.hormones.hormone_history(limit, stimuli_only=stimuli_only)


def load_lexicon(ws: Parts) -> dict[str, dict[str, Any]]:
    """The workspace's lexicon: ``memory/lexicon.json`` if present, else the default."""
    path = ws.memory_dir / "lexicon.json"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return DEFAULT_LEXICON
    except OSError as e:
        raise InvalidStimulus(f"cannot read {path} ({e.strerror}); fix or remove it") from e
    try:
        lexicon = json.loads(text)
    except json.JSONDecodeError as e:
        raise InvalidStimulus(f"{path} is not valid JSON ({e}); fix or remove it") from e
    _check_lexicon(lexicon, str(path))
    return lexicon


def _check_lexicon(lexicon: Any, where: str) -> None:
    if not isinstance(lexicon, dict):
        raise InvalidStimulus(f"{where}: the lexicon must map hormone names to entries")
    for name, entry in lexicon.items():
        if name not in HORMONES:
            raise InvalidStimulus(f"{where}: unknown hormone {name!r}; use {', '.join(HORMONES)}")
        if (
            not isinstance(entry, dict)
            or not isinstance(entry.get("words"), list)
            or isinstance(entry.get("delta"), bool)
            or not isinstance(entry.get("delta"), int | float)
        ):
            raise InvalidStimulus(
                f'{where}: {name} needs "delta" (a number) and "words" (a list of strings)'
            )


@lru_cache(maxsize=64)
def _pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    parts = []
    for word in words:
        stem = word.strip().lower()
        if not stem:
            continue
        if stem.endswith("*"):
            parts.append(re.escape(stem[:-1]) + r"\w*")
        else:
            parts.append(re.escape(stem))
    return re.compile(r"(?<!\w)(?:" + "|".join(parts or [r"(?!)"]) + r")(?!\w)", re.IGNORECASE)


def _may_match(words: tuple[str, ...], lowered: str) -> bool:
    """Whether ``_pattern(words)`` can match an ASCII text, lowercased as ``lowered``: only if
    the text holds a word's stem. In ASCII text ignoring case is lowercasing (the characters
    that also match a letter, like the Kelvin sign, are not ASCII), and a stem that is not ASCII
    is not checked here. The pattern is compiled only when a note needs it; most notes need none.
    """
    for word in words:
        stem = word.strip().lower().removesuffix("*")
        if not stem.isascii() or stem in lowered:
            return True
    return False


def stimuli_from_text(text: str, lexicon: Mapping[str, Any] | None = None) -> list[Stimulus]:
    """The stimuli a note's text gives: [(hormone, delta, reason)], at most one per hormone."""
    lexicon = DEFAULT_LEXICON if lexicon is None else lexicon
    _check_lexicon(dict(lexicon), "lexicon")
    lowered = text.lower() if text.isascii() else None
    found: list[Stimulus] = []
    for name in HORMONES:
        entry = lexicon.get(name)
        if not entry:
            continue
        words = tuple(str(word) for word in entry["words"])
        if lowered is not None and not _may_match(words, lowered):
            continue
        if _pattern(words).search(text):
            found.append((name, float(entry["delta"]), entry.get("reason") or f"{name} stimulus"))
    return found

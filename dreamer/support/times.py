"""Timestamps as dreamer writes them: UTC, second precision, ``2026-03-12T14:30:00Z``."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_now() -> datetime:
    """The current time in UTC; only edges (CLI, scheduler, the Python API) call this."""
    return datetime.now(UTC)


def iso(moment: datetime) -> str:
    """Format an aware datetime as ``YYYY-MM-DDTHH:MM:SSZ``."""
    moment = as_utc(moment)
    # Not strftime: its %Y drops the leading zeros of years before 1000 on glibc.
    return (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T"
        f"{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}Z"
    )


def as_utc(moment: datetime) -> datetime:
    """The same instant in UTC; a naive datetime is taken to be UTC already."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def parse_iso(text: str) -> datetime:
    """Parse an ISO-8601 time (``Z`` or an offset; a bare date means midnight UTC).

    Raises ValueError with a readable message when the text is not a time.
    """
    cleaned = text.strip()
    if cleaned.endswith(("Z", "z")):
        cleaned = cleaned[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(cleaned)
    except ValueError:
        raise ValueError(
            f"{text!r} is not an ISO-8601 time; use e.g. 2026-03-12T14:30:00Z"
        ) from None
    return as_utc(moment)

"""When a job runs: an interval or a cron expression with a time zone (``memory.dream.schedule``).

A schedule is written one of two ways:

- an interval, ``every 2h`` (units ``s``, ``m``, ``h``, ``d``; ``every 90m``), which is what
  ``intervalMinutes`` says too;
- a crontab line of five fields, ``minute hour day month weekday``, optionally followed by an
  IANA time zone: ``0 3 * * *`` (every night at 03:00 UTC), ``0 */2 * * 1-5 Europe/Berlin``
  (every two hours on weekdays, Berlin time). Without a zone the times are UTC, so every machine
  of a fleet reads the same schedule. Weekdays count as in crontab (0 and 7 are Sunday) and
  names (``mon-fri``) work too. When both the day and the weekday are restricted, a time must
  match both (APScheduler's rule, stricter than crontab's "either").

The times come from APScheduler's ``CronTrigger``; this module only reads the expression, names
the field that is wrong, and answers "when is the first run after ``t``".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import TYPE_CHECKING

from dreamer.errors import InvalidSetting

if TYPE_CHECKING:
    from apscheduler.triggers.cron import CronTrigger

FIELDS = ("minute", "hour", "day", "month", "weekday")
_TRIGGER_FIELDS = {
    "minute": "minute",
    "hour": "hour",
    "day": "day",
    "month": "month",
    "weekday": "day_of_week",
}
_RANGES = {"minute": "0-59", "hour": "0-23", "day": "1-31", "month": "1-12", "weekday": "0-7"}
_DAY_NAMES = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_INTERVAL = re.compile(r"^every\s+(\d+(?:\.\d+)?)\s*([smhd])$", re.IGNORECASE)
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
MAX_INTERVAL = timedelta(days=365)
HELP = (
    "write 'minute hour day month weekday [time zone]' such as '0 3 * * *' or "
    "'0 */2 * * 1-5 Europe/Berlin', or an interval such as 'every 2h'"
)


@dataclass(frozen=True)
class Cadence:
    """A parsed schedule: ``every`` for an interval, ``cron`` (and ``zone``) for a crontab line."""

    text: str
    every: timedelta | None = None
    cron: tuple[str, ...] | None = None
    zone: str = "UTC"

    @property
    def is_cron(self) -> bool:
        """True for a crontab line, False for an interval."""
        return self.cron is not None

    def trigger(self) -> CronTrigger:
        """APScheduler's trigger for a crontab line."""
        if self.cron is None:
            raise ValueError("an interval has no cron trigger")
        return _trigger(self.cron, _zone(self.zone))

    def first_after(self, moment: datetime) -> datetime:
        """The first cron time strictly after ``moment`` (UTC); for an interval, moment + every."""
        if self.every is not None:
            return _utc(moment) + self.every
        fire = self.trigger().get_next_fire_time(None, _utc(moment) + timedelta(seconds=1))
        if fire is None:  # e.g. "0 0 30 2 *": no such day
            raise InvalidSetting(f"schedule {self.text!r} never comes due; {HELP}")
        return fire.astimezone(UTC)

    def times(self, start: datetime, count: int) -> list[datetime]:
        """``start`` and the ``count - 1`` run times after it."""
        out = [_utc(start)]
        while len(out) < count:
            out.append(self.first_after(out[-1]))
        return out

    def typical_gap(self, now: datetime) -> timedelta:
        """The interval, or the gap between the next two cron times after ``now``."""
        if self.every is not None:
            return self.every
        first = self.first_after(now)
        return self.first_after(first) - first

    def describe(self) -> str:
        """How ``dream status`` names it."""
        if self.every is not None:
            return f"every {self.every.total_seconds() / 60:g} min"
        return f"cron '{' '.join(self.cron or ())}' ({self.zone})"


def every_minutes(minutes: float) -> Cadence:
    """The schedule ``intervalMinutes`` gives."""
    return Cadence(f"every {minutes:g}m", every=timedelta(minutes=minutes))


def parse(text: str, where: str) -> Cadence:
    """Read a schedule; one ``InvalidSetting`` naming the field that is wrong otherwise."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidSetting(f"{where} must be a schedule, not {text!r}; {HELP}")
    cleaned = " ".join(text.split())
    interval = _INTERVAL.match(cleaned)
    if interval:
        seconds = float(interval.group(1)) * _UNITS[interval.group(2).lower()]
        every = timedelta(seconds=seconds)
        if not timedelta(0) < every <= MAX_INTERVAL:
            raise InvalidSetting(
                f"{where}: the interval in {text!r} must be above 0 and at most a year"
            )
        return Cadence(cleaned, every=every)
    parts = cleaned.split(" ")
    zone = "UTC"
    if len(parts) == 6:
        zone = parts.pop()
        from zoneinfo import ZoneInfoNotFoundError  # here: most settings name no time zone

        try:
            _zone(zone)
        except (ZoneInfoNotFoundError, ValueError):
            raise InvalidSetting(
                f"{where}: the time zone {zone!r} in {text!r} is unknown; use an IANA name such "
                "as Europe/Berlin or UTC"
            ) from None
    if len(parts) != 5:
        raise InvalidSetting(f"{where}: {text!r} has {len(parts)} fields, not 5; {HELP}")
    for name, value in zip(FIELDS, parts, strict=True):
        try:
            _trigger_field(name, value)
        except ValueError as e:
            why = str(e).split("': ", 1)[-1]  # APScheduler repeats the expression first
            raise InvalidSetting(
                f"{where}: the {name} field {value!r} of {text!r} is not valid ({why}); "
                f"{name} takes {_RANGES[name]}, '*', lists, ranges and steps such as '*/2'"
            ) from None
    cadence = Cadence(cleaned, cron=tuple(parts), zone=zone)
    cadence.first_after(datetime(2000, 1, 1, tzinfo=UTC))  # an impossible date is an error now
    return cadence


def _trigger_field(name: str, value: str) -> None:
    from apscheduler.triggers.cron import CronTrigger

    if name == "weekday":
        value = crontab_weekdays(value)
    CronTrigger(**{_TRIGGER_FIELDS[name]: value}, timezone=UTC)


def crontab_weekdays(value: str) -> str:
    """Crontab's weekday numbers (0 and 7 Sunday) as day names, which APScheduler 3 reads
    without its own numbering (0 is Monday there)."""
    items = []
    for item in value.split(","):
        body, _, step = item.partition("/")
        if not re.fullmatch(r"[\d*-]+", body) or (body == "*" and not step):
            items.append(item)  # names, '*' and anything odd: APScheduler judges them
            continue
        low, _, high = body.partition("-")
        if body == "*":
            first, last = 0, 6
        else:
            first = int(low)
            last = int(high) if high else (6 if step else first)
        if not (0 <= first <= 7 and 0 <= last <= 7) or first > last:
            raise ValueError(f"weekdays run 0-7 (0 and 7 are Sunday), not {item!r}")
        stride = int(step) if step else 1
        if stride < 1:
            raise ValueError("a step must be 1 or more")
        items.extend(_DAY_NAMES[day % 7] for day in range(first, last + 1, stride))
    return ",".join(dict.fromkeys(items))


def _trigger(fields: tuple[str, ...], zone: tzinfo) -> CronTrigger:
    # Imported here: every command reads settings, and only a schedule needs apscheduler.
    from apscheduler.triggers.cron import CronTrigger

    minute, hour, day, month, weekday = fields
    return CronTrigger(
        minute=minute,
        hour=hour,
        day=day,
        month=month,
        day_of_week=crontab_weekdays(weekday),
        timezone=zone,
    )


def _zone(name: str) -> tzinfo:
    if name.upper() == "UTC":
        return UTC
    from zoneinfo import ZoneInfo  # here: zoneinfo's import is a cost every command paid

    return ZoneInfo(name)


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)

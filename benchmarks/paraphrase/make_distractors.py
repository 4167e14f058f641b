"""Write distractors.txt: plausible agent notes that answer none of the probe's questions.

Deterministic (seeded with ``random.Random(7)``), so the file is reproducible byte for byte:

    python benchmarks/paraphrase/make_distractors.py benchmarks/paraphrase/distractors.txt

With no path it writes to standard output. Either way the bytes are the same on every platform
(UTF-8, ``\\n`` line endings), so tests/retrieval/test_paraphrase_probe.py can compare them exactly.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

PEOPLE = [
    "Hannah",
    "Victor",
    "Aiko",
    "Rafael",
    "Greta",
    "Omar",
    "Ines",
    "Tobias",
    "Mei",
    "Kofi",
    "Yara",
    "Lars",
    "Dmitri",
    "Chloe",
    "Nikhil",
    "Beatriz",
    "Emil",
    "Zoe",
    "Arjun",
    "Freya",
]
TOOLS = [
    "Terraform",
    "Grafana",
    "Sentry",
    "Airflow",
    "dbt",
    "Vault",
    "Redshift",
    "Kafka",
    "Celery",
    "Nginx",
    "RabbitMQ",
    "Snowflake",
    "Metabase",
    "Jira",
    "Figma",
    "Notion",
]
MODULES = [
    "checkout",
    "onboarding",
    "search indexer",
    "report exporter",
    "auth gateway",
    "notification worker",
    "ledger sync",
    "image resizer",
    "audit trail",
    "pricing engine",
]
PLACES = [
    "Oslo",
    "Krakow",
    "Nairobi",
    "Montreal",
    "Seville",
    "Utrecht",
    "Tallinn",
    "Osaka",
    "Adelaide",
    "Bologna",
    "Quito",
    "Ghent",
]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
HOBBIES = [
    "bouldering",
    "pottery",
    "birdwatching",
    "sourdough baking",
    "chess",
    "kayaking",
    "woodworking",
    "salsa dancing",
    "astronomy",
    "urban sketching",
]
FOODS = ["ramen", "falafel", "paella", "dumplings", "tacos", "risotto", "pho", "shakshuka"]
TOPICS = [
    "caching strategy",
    "retry policy",
    "schema migration",
    "error budget",
    "feature flags",
    "API versioning",
    "on-call rotation",
    "release checklist",
]

TEMPLATES = [
    "{p} reviewed the pull request for the {m} and asked for more tests",
    "Upgraded {t} to the latest minor version on the {m} service",
    "{p} is presenting the {topic} proposal at the {day} guild meeting",
    "The {m} dashboard in {t} shows p95 latency creeping up since {month}",
    "{p} spent the weekend {h} near {place}",
    "Ordered {food} for the team lunch on {day}",
    "Wrote a short design note about the {topic} for the {m}",
    "{p} recommended a book about {h} and lent me her copy",
    "Conference talk proposal about {topic} submitted, decision expected in {month}",
    "Rotated the {t} credentials for the {m} after the audit",
    "{p} asked whether the {m} could emit metrics to {t}",
    "The {m} nightly test suite took 41 minutes, mostly integration tests",
    "Pairing session with {p} on the {m} was productive",
    "Booked a hotel in {place} for the offsite in {month}",
    "{p} prefers written updates over calls when discussing the {topic}",
    "Found a flaky test in the {m} related to timezones",
    "{t} alert for the {m} fired twice during the night, both false positives",
    "Cleaned up unused dashboards in {t}",
    "{p} joined the {m} team as a contractor for three months",
    "Drafted the agenda for the {topic} workshop on {day}",
    "Learned that {p} grew up in {place}",
    "The {food} place around the corner closes early on {day}s",
    "{p} is organising a {h} meetup in {month}",
    "Migrated the {m} jobs from cron to {t}",
    "Benchmark: the {m} handles 1,200 requests per second on one core",
    "Postponed the {topic} decision until {p} is back from {place}",
    "{p} shared photos from a trip to {place}",
    "Renamed the {m} repository and updated the CI badges",
    "Tried {food} at the new market hall, quite good",
    "Read an article on {topic} that argued for smaller batches",
    "{p} and I disagreed about the {topic}; settled on a trial for two sprints",
    "Archived the old {t} project for the {m}",
    "Weekly sync with {p} moved to {day}",
    "The {m} README now explains local setup with {t}",
    "{p} volunteers at an animal shelter in {place} on {day}s",
    "Took notes at the {topic} retro; action items assigned to {p}",
    "Exported the {month} usage numbers from {t} for finance",
    "{p} got certified in {t} last {month}",
    "Refilled the office coffee beans; {p} asked for a darker roast",
    "The {m} error rate dropped after the {topic} change",
    "Shadowed {p} during the {m} incident review",
    "Played {h} with friends from {place} over video call",
    "Sketched a diagram of the {m} data flow for {p}",
    "{p} recommended {t} for the {topic} work",
]


def distractors() -> list[str]:
    """440 distinct notes, in a fixed order."""
    rng = random.Random(7)
    seen: set[str] = set()
    lines: list[str] = []
    attempt = 0
    while len(lines) < 440:
        template = TEMPLATES[attempt % len(TEMPLATES)]
        attempt += 1
        text = template.format(
            p=rng.choice(PEOPLE),
            t=rng.choice(TOOLS),
            m=rng.choice(MODULES),
            place=rng.choice(PLACES),
            day=rng.choice(DAYS),
            month=rng.choice(MONTHS),
            h=rng.choice(HOBBIES),
            food=rng.choice(FOODS),
            topic=rng.choice(TOPICS),
        )
        if text not in seen:
            seen.add(text)
            lines.append(text)
    return lines


def main(argv: list[str]) -> None:
    """Write the notes, one per line, to the path in argv (or to standard output)."""
    data = "".join(line + "\n" for line in distractors()).encode("utf-8")
    if argv:
        Path(argv[0]).write_bytes(data)
    else:
        sys.stdout.buffer.write(data)


if __name__ == "__main__":
    main(sys.argv[1:])

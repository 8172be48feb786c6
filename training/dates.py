"""Data for the date-translation task: a written English date -> ISO 8601.

Translating dates is the classic small task for seeing cross-attention at
work: to write the month digits of "2026-11-21" the decoder has to look at
"November" (or "11", or "Nov."), wherever the source happens to put it.

Pure standard library on purpose: the data can be generated, inspected and
tested without torch. Every source string is built from labelled pieces, so
the character span of the day, month and year is known exactly
(``render_with_spans``); ``analysis.alignment.month_span`` recovers the month
span from any string in these formats, including ones this module did not write.
"""

from __future__ import annotations

import datetime
import random
import re
import string
import zlib
from typing import Callable

FIRST_DATE = datetime.date(1900, 1, 1)
LAST_DATE = datetime.date(2099, 12, 31)

MONTHS = ("January", "February", "March", "April", "May", "June", "July",
          "August", "September", "October", "November", "December")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday",
            "Saturday", "Sunday")  # index = date.weekday()

FORMATS = {
    "day_of_month": "ordinal day 'of' full month, e.g. 'Saturday, 21st of November 2026'",
    "the_day_of_month": "'the' ordinal day 'of' full month, e.g. 'the 21st of November, 2026'",
    "month_day_year": "full month, day, year, e.g. 'November 21, 2026'",
    "day_month_year": "day, full month, year, e.g. '21 November 2026'",
    "day_mon_year": "day, abbreviated month, year, e.g. '21 Nov 2026'",
    "mon_dot_day_year": "abbreviated month with a dot, day, year, e.g. 'Nov. 21, 2026'",
    "us_slash": "US numeric, month first, e.g. '11/21/2026' or '1/5/2026'",
    "dot_day_first": "numeric with dots, day first, e.g. '21.11.2026' or '01.05.2026'",
    "iso": "already ISO 8601, e.g. '2026-11-21'",
}

# Every character a source or a target may contain. All ASCII letters (not
# only those the month and weekday names use) so a character vocabulary built
# from this also covers whatever a student types into the demo.
ALPHABET = "".join(sorted(set(string.ascii_letters + string.digits + " ,-./")))

# Longest possible source: "Wednesday, the 23rd of September, 2026".
MAX_SOURCE_CHARS = 38
TARGET_CHARS = len("2026-11-21")

Pieces = list[tuple[str, str | None]]  # (text, field name or None)


def ordinal(n: int) -> str:
    """'1st', '2nd', '3rd', '4th', but '11th', '12th', '13th' (teens are irregular)."""
    if 10 <= n % 100 <= 20:
        return f"{n}th"
    suffix = {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _day(d: datetime.date, rng: random.Random, always_ordinal: bool = False) -> str:
    return ordinal(d.day) if always_ordinal or rng.random() < 0.5 else str(d.day)


def _abbreviated_month(d: datetime.date, rng: random.Random) -> str:
    # "Sep" and "Sept" are both common; everything else has one short form.
    if d.month == 9 and rng.random() < 0.5:
        return "Sept"
    return MONTHS[d.month - 1][:3]


def _comma(rng: random.Random) -> str:
    # The comma before the year is often dropped; the model should not rely on it.
    return ", " if rng.random() < 0.7 else " "


def _numeric(d: datetime.date, rng: random.Random, order: str, separator: str) -> Pieces:
    width = 2 if rng.random() < 0.5 else 1  # "01/05/2026" as well as "1/5/2026"
    values = {"day": f"{d.day:0{width}d}", "month": f"{d.month:0{width}d}", "year": str(d.year)}
    pieces: Pieces = []
    for i, field in enumerate(order.split()):
        if i:
            pieces.append((separator, None))
        pieces.append((values[field], field))
    return pieces


def _mon_dot(d: datetime.date, rng: random.Random) -> Pieces:
    month = _abbreviated_month(d, rng)
    dot = "" if month == "May" else "."  # "May" is already the full name
    return [(month, "month"), (dot + " ", None), (_day(d, rng), "day"),
            (_comma(rng), None), (str(d.year), "year")]


_FAMILIES: dict[str, Callable[[datetime.date, random.Random], Pieces]] = {
    "day_of_month": lambda d, rng: [
        (_day(d, rng, always_ordinal=True), "day"), (" of ", None),
        (MONTHS[d.month - 1], "month"), (" ", None), (str(d.year), "year")],
    "the_day_of_month": lambda d, rng: [
        ("the ", None), (_day(d, rng, always_ordinal=True), "day"), (" of ", None),
        (MONTHS[d.month - 1], "month"), (_comma(rng), None), (str(d.year), "year")],
    "month_day_year": lambda d, rng: [
        (MONTHS[d.month - 1], "month"), (" ", None), (_day(d, rng), "day"),
        (_comma(rng), None), (str(d.year), "year")],
    "day_month_year": lambda d, rng: [
        (_day(d, rng), "day"), (" ", None), (MONTHS[d.month - 1], "month"),
        (" ", None), (str(d.year), "year")],
    "day_mon_year": lambda d, rng: [
        (_day(d, rng), "day"), (" ", None), (_abbreviated_month(d, rng), "month"),
        (" ", None), (str(d.year), "year")],
    "mon_dot_day_year": _mon_dot,
    "us_slash": lambda d, rng: _numeric(d, rng, "month day year", "/"),
    "dot_day_first": lambda d, rng: _numeric(d, rng, "day month year", "."),
    "iso": lambda d, rng: [
        (str(d.year), "year"), ("-", None), (f"{d.month:02d}", "month"),
        ("-", None), (f"{d.day:02d}", "day")],
}
assert _FAMILIES.keys() == FORMATS.keys(), "every format needs a description and a renderer"


def _title(text: str) -> str:
    # str.title() would also write "21St"; capitalise only letters that start a word.
    return re.sub(r"\b[a-z]", lambda m: m.group().upper(), text)


_CASES = {"original": lambda s: s, "lower": str.lower, "upper": str.upper, "title": _title}


def render_with_spans(d: datetime.date, fmt: str,
                      rng: random.Random) -> tuple[str, dict[str, tuple[int, int]]]:
    """One written form of ``d`` plus the [start, end) character span of each part.

    Keys are "day", "month", "year" and, when a weekday is written, "weekday".
    The month span covers the name or number only, never a trailing dot.
    """
    if fmt not in _FAMILIES:
        raise ValueError(f"unknown date format {fmt!r}; choose one of {sorted(FORMATS)}")
    pieces: Pieces = []
    if rng.random() < 0.4:
        weekday = WEEKDAYS[d.weekday()]
        if rng.random() < 0.5:
            weekday = weekday[:3]
        pieces += [(weekday, "weekday"), (", " if rng.random() < 0.8 else " ", None)]
    pieces += _FAMILIES[fmt](d, rng)

    spans, position = {}, 0
    for text, field in pieces:
        if field is not None:
            spans[field] = (position, position + len(text))
        position += len(text)
    # Case changes keep ASCII lengths, so the spans stay valid.
    case = rng.choices(list(_CASES), weights=[55, 15, 15, 15])[0]
    return _CASES[case]("".join(text for text, _ in pieces)), spans


def render(d: datetime.date, fmt: str, rng: random.Random) -> str:
    """One written form of ``d`` in family ``fmt``, with variations drawn from ``rng``."""
    return render_with_spans(d, fmt, rng)[0]


def is_validation(d: datetime.date) -> bool:
    """About 5% of all dates, chosen by a stable hash of the date itself.

    Splitting by date (not by example) means no validation date is ever seen
    in training under any spelling, so validation measures generalisation
    rather than recall. crc32 is stable across runs, unlike hash().
    """
    return zlib.crc32(d.isoformat().encode()) % 20 == 0


def random_date(rng: random.Random, split: str | None = None) -> datetime.date:
    """Uniform over 1900-01-01..2099-12-31, optionally only from one split."""
    if split not in (None, "train", "validation"):
        raise ValueError(f"split must be None, 'train' or 'validation', not {split!r}")
    while True:
        d = datetime.date.fromordinal(rng.randint(FIRST_DATE.toordinal(), LAST_DATE.toordinal()))
        if split is None or is_validation(d) == (split == "validation"):
            return d


def random_pair(rng: random.Random, split: str | None = None) -> tuple[str, str]:
    """(source text, ISO target) for a random date and a random format."""
    d = random_date(rng, split)
    return render(d, rng.choice(list(FORMATS)), rng), d.isoformat()


def pairs_with_spans(n: int, split: str = "train",
                     seed: int = 0) -> list[tuple[str, str, dict[str, tuple[int, int]]]]:
    """``n`` deterministic (source, ISO, spans) triples drawn only from ``split``."""
    if split not in ("train", "validation"):
        raise ValueError(f"split must be 'train' or 'validation', not {split!r}")
    # The split is part of the seed so the two splits are not drawn in lockstep.
    rng = random.Random(f"{split}-{seed}")
    triples = []
    for _ in range(n):
        d = random_date(rng, split)
        source, spans = render_with_spans(d, rng.choice(list(FORMATS)), rng)
        triples.append((source, d.isoformat(), spans))
    return triples


def pairs(n: int, split: str = "train", seed: int = 0) -> list[tuple[str, str]]:
    """``n`` deterministic (source, ISO) pairs drawn only from ``split``."""
    return [(source, iso) for source, iso, _ in pairs_with_spans(n, split, seed)]


def independent_examples() -> list[tuple[str, str]]:
    """Hand-written (source, ISO) pairs, typed rather than generated.

    They stand in for "someone else's generator": a model that only learned
    the quirks of ``render`` should still get these right.
    """
    return [
        ("Tuesday, 4th of July 1995", "1995-07-04"),
        ("DEC. 25, 1999", "1999-12-25"),
        ("the 1st of January, 2000", "2000-01-01"),
        ("2/29/2000", "2000-02-29"),
        ("31.12.2099", "2099-12-31"),
        ("1900-01-01", "1900-01-01"),
        ("Monday, 1st of January 1900", "1900-01-01"),
        ("the 22nd of March, 1987", "1987-03-22"),
        ("March 3, 1962", "1962-03-03"),
        ("3 March 1962", "1962-03-03"),
        ("11 Nov 1918", "1918-11-11"),
        ("Nov. 11, 1918", "1918-11-11"),
        ("11/11/1918", "1918-11-11"),
        ("11.11.1918", "1918-11-11"),
        ("1918-11-11", "1918-11-11"),
        ("Friday, 13th of October 2017", "2017-10-13"),
        ("friday, the 13th of september, 2013", "2013-09-13"),
        ("Sat, 12 Jun 2021", "2021-06-12"),
        ("Sun, Jul. 20, 1969", "1969-07-20"),
        ("July 20th, 1969", "1969-07-20"),
        ("20 July 1969", "1969-07-20"),
        ("the 2nd of February, 2022", "2022-02-02"),
        ("Tuesday, 22.02.2022", "2022-02-22"),
        ("9/11/2001", "2001-09-11"),
        ("SEPTEMBER 11, 2001", "2001-09-11"),
        ("Sept. 1, 1939", "1939-09-01"),
        ("1 Sep 1939", "1939-09-01"),
        ("05/08/1945", "1945-05-08"),
        ("8.5.1945", "1945-05-08"),
        ("the 6th of june, 1944", "1944-06-06"),
        ("June 6, 1944", "1944-06-06"),
        ("Thursday, 24th of October 1929", "1929-10-24"),
        ("Oct. 24, 1929", "1929-10-24"),
        ("14 APR 1912", "1912-04-14"),
        ("the 15th of April, 1912", "1912-04-15"),
        ("Apr. 15th, 1912", "1912-04-15"),
        ("Mon, 19 Oct 1987", "1987-10-19"),
        ("10/19/1987", "1987-10-19"),
        ("19.10.1987", "1987-10-19"),
        ("1987-10-19", "1987-10-19"),
        ("the 3rd of August, 2050", "2050-08-03"),
        ("12th of December 2012", "2012-12-12"),
        ("12/12/2012", "2012-12-12"),
        ("Dec 21, 2012", "2012-12-21"),
        ("21 December 2012", "2012-12-21"),
        ("FRIDAY, 21.12.2012", "2012-12-21"),
        ("2099-12-31", "2099-12-31"),
        ("Thursday, 31st of December 2099", "2099-12-31"),
        ("1 Jan 2099", "2099-01-01"),
        ("Saturday, 21st of November 2026", "2026-11-21"),
        ("the 21st of November, 2026", "2026-11-21"),
        ("November 21, 2026", "2026-11-21"),
        ("21 November 2026", "2026-11-21"),
        ("21 Nov 2026", "2026-11-21"),
        ("Nov. 21, 2026", "2026-11-21"),
        ("11/21/2026", "2026-11-21"),
        ("21.11.2026", "2026-11-21"),
        ("2026-11-21", "2026-11-21"),
        ("Feb 29, 1904", "1904-02-29"),
        ("the 23rd of may, 1934", "1934-05-23"),
        ("01.01.1970", "1970-01-01"),
        ("1/1/1970", "1970-01-01"),
        ("Thu, 1 Jan 1970", "1970-01-01"),
        ("Wednesday, the 2nd of January, 1901", "1901-01-02"),
        ("wed, 11th of august 1999", "1999-08-11"),
        ("Aug. 11, 1999", "1999-08-11"),
    ]

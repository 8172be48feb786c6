"""Tests for the date-translation data.

Sources are checked with a small parser written here, independently of the
generator, so a bug in render cannot hide behind the same bug in the check.
"""

import datetime
import random
import re

import pytest

from analysis.alignment import month_span
from training import dates

MONTH_PREFIXES = ["jan", "feb", "mar", "apr", "may", "jun",
                  "jul", "aug", "sep", "oct", "nov", "dec"]
WEEKDAY_PREFIXES = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
WEEKDAY_WORD = re.compile(r"^(monday|tuesday|wednesday|thursday|friday|saturday|sunday"
                          r"|mon|tue|wed|thu|fri|sat|sun)\b,? ")


def parse(source: str) -> tuple[datetime.date, str | None]:
    """Independent reading of a source: the date and the weekday word, if any."""
    text = source.lower()
    weekday = None
    match = WEEKDAY_WORD.match(text)
    if match:
        weekday, text = match.group(1), text[match.end():]
    if m := re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", text):
        year, month, day = m.groups()
    elif m := re.fullmatch(r"(\d{1,2})/(\d{1,2})/(\d{4})", text):
        month, day, year = m.groups()
    elif m := re.fullmatch(r"(\d{1,2})\.(\d{1,2})\.(\d{4})", text):
        day, month, year = m.groups()
    else:
        names = re.findall(r"[a-z]+", text)
        month_words = [w for w in names if w[:3] in MONTH_PREFIXES]
        assert len(month_words) == 1, f"expected one month name in {source!r}"
        month = MONTH_PREFIXES.index(month_words[0][:3]) + 1
        (day,) = re.findall(r"\b(\d{1,2})(?:st|nd|rd|th)?\b", text)
        (year,) = re.findall(r"\b(\d{4})\b", text)
    return datetime.date(int(year), int(month), int(day)), weekday


def samples(fmt: str, n: int, seed: int = 0):
    rng = random.Random(seed)
    for _ in range(n):
        d = dates.random_date(rng)
        yield d, dates.render(d, fmt, rng)


@pytest.mark.parametrize("fmt", list(dates.FORMATS))
def test_every_family_round_trips_through_an_independent_parse(fmt):
    for d, source in samples(fmt, 500):
        parsed, weekday = parse(source)
        assert parsed == d, f"{source!r} read as {parsed}, rendered from {d}"
        if weekday is not None:
            assert weekday[:3] == WEEKDAY_PREFIXES[d.weekday()], \
                f"{source!r} names the wrong weekday for {d}"


@pytest.mark.parametrize("fmt", list(dates.FORMATS))
def test_every_family_varies_weekday_and_case(fmt):
    sources = [source for _, source in samples(fmt, 400, seed=1)]
    weekdays = [WEEKDAY_WORD.match(s.lower()) for s in sources]
    written = {m.group(1) for m in weekdays if m}
    assert any(m is None for m in weekdays), f"{fmt} never appears without a weekday"
    assert any(len(w) > 3 for w in written), f"{fmt} never writes a full weekday"
    assert any(len(w) == 3 for w in written), f"{fmt} never writes an abbreviated weekday"
    if fmt not in ("iso", "us_slash", "dot_day_first"):
        assert any(s == s.upper() for s in sources), f"{fmt} is never upper case"
        assert any(s == s.lower() for s in sources), f"{fmt} is never lower case"


def test_weekday_written_matches_the_real_weekday():
    rng = random.Random(2)
    seen = 0
    for _ in range(3000):
        source, iso = dates.random_pair(rng)
        match = WEEKDAY_WORD.match(source.lower())
        if match:
            seen += 1
            real = datetime.date.fromisoformat(iso).weekday()
            assert match.group(1)[:3] == WEEKDAY_PREFIXES[real], f"{source!r} is not a {iso}"
    assert seen > 500, "weekdays should be written fairly often"


@pytest.mark.parametrize("n, expected", [
    (1, "1st"), (2, "2nd"), (3, "3rd"), (4, "4th"), (11, "11th"), (12, "12th"),
    (13, "13th"), (21, "21st"), (22, "22nd"), (23, "23rd"), (31, "31st"),
])
def test_ordinal_suffixes(n, expected):
    assert dates.ordinal(n) == expected


def test_ordinals_are_optional_only_where_natural():
    d = datetime.date(2026, 11, 22)
    sources = {fmt: {dates.render(d, fmt, random.Random(i)).lower() for i in range(200)}
               for fmt in ("day_of_month", "month_day_year")}
    assert all("22nd" in s for s in sources["day_of_month"]), "'22 of November' is not English"
    assert any("22nd" in s for s in sources["month_day_year"])
    assert any("22nd" not in s for s in sources["month_day_year"])


def test_numeric_forms_have_optional_leading_zeros():
    d = datetime.date(2026, 1, 5)
    slash = {dates.render(d, "us_slash", random.Random(i)) for i in range(100)}
    dot = {dates.render(d, "dot_day_first", random.Random(i)) for i in range(100)}
    assert any(s.endswith("01/05/2026") for s in slash)
    assert any(s.endswith(" 1/5/2026") or s == "1/5/2026" for s in slash)
    assert any(s.endswith("05.01.2026") for s in dot)
    assert any(s.endswith(" 5.1.2026") or s == "5.1.2026" for s in dot)


def test_both_september_abbreviations_appear():
    d = datetime.date(2026, 9, 3)
    sources = {dates.render(d, "mon_dot_day_year", random.Random(i)).lower() for i in range(100)}
    assert any("sep. " in s for s in sources) and any("sept. " in s for s in sources)


def test_years_cover_both_bounds():
    for d in (dates.FIRST_DATE, dates.LAST_DATE):
        for fmt in dates.FORMATS:
            assert parse(dates.render(d, fmt, random.Random(0)))[0] == d
    years = [int(iso[:4]) for _, iso in dates.pairs(50_000, seed=3)]
    assert min(years) == 1900 and max(years) == 2099


def test_train_and_validation_dates_are_disjoint():
    train = {iso for _, iso in dates.pairs(50_000, "train", seed=4)}
    validation = {iso for _, iso in dates.pairs(5_000, "validation", seed=4)}
    assert train.isdisjoint(validation)
    assert all(dates.is_validation(datetime.date.fromisoformat(iso)) for iso in validation)
    assert not any(dates.is_validation(datetime.date.fromisoformat(iso)) for iso in train)


def test_validation_fraction_is_about_five_percent():
    rng = random.Random(5)
    draws = [dates.is_validation(dates.random_date(rng)) for _ in range(50_000)]
    assert 0.04 < sum(draws) / len(draws) < 0.06


def test_pairs_are_deterministic_and_seeded():
    assert dates.pairs(200, seed=7) == dates.pairs(200, seed=7)
    assert dates.pairs(200, seed=7) != dates.pairs(200, seed=8)
    assert dates.pairs(50, "validation", seed=7) == dates.pairs(50, "validation", seed=7)
    with pytest.raises(ValueError):
        dates.pairs(1, "test")


@pytest.mark.parametrize("fmt", list(dates.FORMATS))
def test_month_span_covers_the_month(fmt):
    rng = random.Random(6)
    for _ in range(500):
        d = dates.random_date(rng)
        source, spans = dates.render_with_spans(d, fmt, rng)
        assert month_span(source) == spans["month"], f"{source!r}: {spans}"
        month = source[slice(*spans["month"])]
        if month.isdigit():
            assert int(month) == d.month, f"{source!r}: span holds {month!r}"
        else:
            assert MONTH_PREFIXES.index(month[:3].lower()) + 1 == d.month, source
            assert month.isalpha(), f"{source!r}: span {month!r} should be letters only"
        for field, value in (("day", d.day), ("year", d.year)):
            text = re.sub(r"(st|nd|rd|th)$", "", source[slice(*spans[field])].lower())
            assert int(text) == value, f"{source!r}: {field} span holds {text!r}"


def test_month_span_is_none_without_a_month():
    assert month_span("hello world") is None


def test_alphabet_covers_every_source_and_target():
    allowed = set(dates.ALPHABET)
    assert dates.ALPHABET == "".join(sorted(allowed)), "ALPHABET must be sorted and unique"
    rng = random.Random(8)
    for _ in range(20_000):
        source, iso = dates.random_pair(rng)
        assert set(source) <= allowed, f"{source!r} uses {set(source) - allowed}"
        assert set(iso) <= allowed


def test_max_source_chars_is_a_tight_bound():
    rng = random.Random(9)
    lengths = [len(dates.random_pair(rng)[0]) for _ in range(20_000)]
    assert max(lengths) <= dates.MAX_SOURCE_CHARS
    # A Wednesday in September with a two-digit "-rd" day is the worst case.
    worst = datetime.date(2026, 9, 23)
    assert worst.weekday() == 2
    longest = max(len(dates.render(worst, fmt, random.Random(i)))
                  for fmt in dates.FORMATS for i in range(300))
    assert longest == dates.MAX_SOURCE_CHARS


def test_unknown_format_is_an_error():
    with pytest.raises(ValueError, match="unknown date format"):
        dates.render(datetime.date(2000, 1, 1), "roman", random.Random(0))


def test_independent_examples_are_correct():
    examples = dates.independent_examples()
    assert len(examples) >= 50
    for source, iso in examples:
        d = datetime.date.fromisoformat(iso)
        assert dates.FIRST_DATE <= d <= dates.LAST_DATE
        parsed, weekday = parse(source)
        assert parsed == d, f"{source!r} is {parsed}, not {iso}"
        if weekday is not None:
            assert weekday[:3] == WEEKDAY_PREFIXES[d.weekday()], f"{source!r}: wrong weekday"
        assert set(source) <= set(dates.ALPHABET), source
        assert len(source) <= dates.MAX_SOURCE_CHARS, source
        span = month_span(source)
        assert span is not None, source
        month = source[slice(*span)]
        number = int(month) if month.isdigit() else MONTH_PREFIXES.index(month[:3].lower()) + 1
        assert number == d.month, f"{source!r}: month span holds {month!r}"

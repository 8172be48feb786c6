"""The soak's verdict (bench/soak.py levels): a level is the median of WINDOW readings in a row, so one high
reading is not growth, and a rise that lasts is."""
from bench.soak import EVERY, FILLED, LIMIT_MB, WINDOW, levels


def readings(mbs):
    """(requests, MB) from FILLED on, one every EVERY."""
    return [(FILLED + i * EVERY, mb) for i, mb in enumerate(mbs)]


def test_one_high_reading_is_not_a_level():
    mbs = [2000.0] * 40
    mbs[20] = 2000.0 + 3 * LIMIT_MB
    level, highest, trend = levels(readings(mbs), FILLED)
    assert (level, highest) == (2000.0, 2000.0)
    assert abs(trend) < 5


def test_a_rise_that_lasts_is_growth():
    mbs = [2000.0] * 20 + [2000.0 + LIMIT_MB + 10] * WINDOW  # the last window's readings all high
    level, highest, trend = levels(readings(mbs), FILLED)
    assert highest - level == LIMIT_MB + 10
    assert trend > 0


def test_a_slow_rise_is_growth_and_its_trend():
    mbs = [2000.0 + 2 * i for i in range(40)]  # 20 MB per 1,000 requests: 78 MB in 3,900
    level, highest, trend = levels(readings(mbs), FILLED)
    assert level == 2000.0 + (WINDOW - 1)  # the median of the first window: 0, 2, ..., 2 (WINDOW - 1) MB up
    assert highest - level > LIMIT_MB
    assert round(trend, 6) == 2 * 1000 / EVERY


def test_readings_that_alternate_are_one_level():
    """The mix's long texts repeat every 200 requests, two readings: a fuller cache at every other reading is not a
    rise (an odd window's median would go up and down with it)."""
    mbs = [2000.0 if i % 2 else 2000.0 + LIMIT_MB + 20 for i in range(40)]
    level, highest, trend = levels(readings(mbs), FILLED)
    assert level == highest == 2000.0 + (LIMIT_MB + 20) / 2
    assert abs(trend) < 5


def test_the_level_is_read_from_filled_on():
    points = [(0, 1000.0), (500, 1500.0)] + readings([2000.0] * 10)
    assert levels(points, FILLED)[0] == 2000.0

"""Virtual time: integer microseconds since the scenario's start, and its text forms.

Integer microseconds keep slices, replays and crash recovery bit-identical (no float drift)
and match the finest resolution Kubernetes serialises (metav1.MicroTime).
"""

from __future__ import annotations

import calendar
import re
import time
from datetime import UTC, datetime
from decimal import Decimal

US = 1_000_000  # microseconds per second
MS = 1_000

_DURATION_RE = re.compile(r"^(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m(?!s))?(?:(\d+(?:\.\d+)?)s)?"
                          r"(?:(\d+(?:\.\d+)?)ms)?$")


def seconds(value: float) -> int:
    """Seconds (float) -> integer microseconds, rounded to the nearest microsecond."""
    return int(round(value * US))


def to_seconds(us: int) -> float:
    return us / US


def parse_duration(value: object) -> float:
    """Parse `90`, `90s`, `1.5s`, `5m`, `1h`, `1m30s`, `200ms` into seconds.

    Raises ValueError with a message naming the accepted forms.
    """
    if isinstance(value, bool):
        raise ValueError(f"expected a duration such as 90, 90s, 5m or 1h, got {value!r}")
    if isinstance(value, (int, float)):
        if value < 0:
            raise ValueError(f"must not be negative, got {value!r}")
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        try:
            number = float(text)
        except ValueError:
            pass
        else:
            if number < 0:
                raise ValueError(f"must not be negative, got {value!r}")
            return number
        if text.startswith("-"):
            raise ValueError(f"must not be negative, got {value!r}")
        match = _DURATION_RE.match(text)
        if text and match and any(match.groups()):
            h, m, s, ms = (float(g) if g else 0.0 for g in match.groups())
            return h * 3600 + m * 60 + s + ms / 1000
    raise ValueError(f"expected a duration such as 90, 90s, 5m or 1h, got {value!r}")


def go_duration(us: int) -> str:
    """Format like Go's time.Duration.String (e.g. "3m0s", "3m10.25s", "500ms")."""
    if us == 0:
        return "0s"
    sign = "-" if us < 0 else ""
    us = abs(us)
    if us < US:
        if us < MS:
            return f"{sign}{us}µs"
        return f"{sign}{_trim(us / MS)}ms"
    total_s, frac = divmod(us, US)
    h, rem = divmod(total_s, 3600)
    m, s = divmod(rem, 60)
    sec = f"{s}" if frac == 0 else f"{s}.{frac:06d}".rstrip("0")
    if h:
        return f"{sign}{h}h{m}m{sec}s"
    if m:
        return f"{sign}{m}m{sec}s"
    return f"{sign}{sec}s"


def _trim(x: float) -> str:
    text = f"{x:.6f}".rstrip("0").rstrip(".")
    return text


def format_duration(s: float) -> str:
    """Short human form used in scenario documents: 90 -> "90s", 300 -> "5m", 3600 -> "1h"."""
    if s >= 3600 and s % 3600 == 0:
        return f"{int(s // 3600)}h"
    if s >= 60 and s % 60 == 0:
        return f"{int(s // 60)}m"
    if float(s).is_integer():
        return f"{int(s)}s"
    return f"{Decimal(repr(float(s))):f}s"  # never an exponent (5e-324s), which parse_duration does not read


_UTC_OFFSET = re.compile(r"T.*(?P<offset>[+-](?P<hours>\d{2}):?(?P<minutes>\d{2}))$")


def parse_start_time(value: str) -> int:
    """RFC 3339 (`2026-01-01T00:00:00Z`) -> epoch microseconds."""
    text = value.strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    offset = _UTC_OFFSET.search(text)
    if offset and (int(offset["hours"]) > 23 or int(offset["minutes"]) > 59):
        # said in words: datetime's own message prints Python timedelta reprs
        raise ValueError(f"the time zone offset {offset['offset']} is out of range, at most 23:59 either way")
    try:
        dt = datetime.fromisoformat(text)
    except ValueError as exc:  # "month must be in 1..12" and the like are words; "Invalid isoformat string" not
        raise ValueError(str(exc) if "isoformat" not in str(exc) else f"{value!r} is not a date and time") from None
    if dt.tzinfo is None:
        raise ValueError(f"needs a time zone (e.g. a trailing Z), got {value!r}")
    dt = dt.astimezone(UTC)
    return calendar.timegm(dt.timetuple()) * US + dt.microsecond


class WallClock:
    """Turns virtual microseconds into the timestamps Kubernetes prints.

    metav1.Time is RFC 3339 to the second; metav1.MicroTime always has six fractional digits.
    """

    SECONDS_KEPT = 4096  # formatted seconds remembered: objects' creation times and "now" alternate

    def __init__(self, start_epoch_us: int) -> None:
        self.start = start_epoch_us
        self._seconds: dict[int, str] = {}

    def _second(self, epoch_s: int) -> str:
        text = self._seconds.get(epoch_s)
        if text is None:
            if len(self._seconds) >= self.SECONDS_KEPT:
                self._seconds.clear()
            text = self._seconds[epoch_s] = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(epoch_s))
        return text

    def time(self, t: int | None) -> str | None:
        """metav1.Time: truncated to the second."""
        if t is None:
            return None
        return self._second((self.start + t) // US) + "Z"

    def micro(self, t: int | None) -> str | None:
        """metav1.MicroTime: six fractional digits."""
        if t is None:
            return None
        s, us = divmod(self.start + t, US)
        return f"{self._second(s)}.{us:06d}Z"

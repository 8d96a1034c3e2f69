"""A spreadsheet cell's value as the cell shows it, from its number format (ECMA-376 Part 1, 18.8.31 numFmts).

openpyxl hands over the stored value (``4.5``, ``0.125``, a ``datetime`` for a date-formatted cell) and the cell's
format code (``#,##0.00``, ``0%``, ``"$"#,##0.00``, ``d-mmm-yy``). ``shown`` writes the value as Excel displays it
for the codes people use: decimals, thousands separators, percentages, scientific notation, literal text and
currency symbols around the number, negative sections, and date and time codes; ``General`` as Excel's General
(whole numbers without ``.0``, others in at most 11 characters). A code it does not model (fractions, conditions)
falls back to General: the number is right, only its dress is plainer.

>>> shown(1234.5, "#,##0.00"), shown(0.125, "0.0%"), shown(-3, '"$"#,##0.00;[Red]\\\\-"$"#,##0.00'), shown(4.0, "General")
('1,234.50', '12.5%', '-$3.00', '4')
>>> import datetime
>>> shown(datetime.datetime(2024, 3, 5, 14, 7), "d-mmm-yy h:mm AM/PM"), shown(1/3, "General"), shown(12345678, "0.00E+00")
('5-Mar-24 2:07 PM', '0.333333333', '1.23E+07')
"""

from __future__ import annotations

import datetime
import re
from typing import Any

_BRACKETS = re.compile(r"\[[^\]]*\]")
_QUOTED = re.compile(r'"([^"]*)"|\\(.)|_.|\*.')
_NUMBER = re.compile(r"[0#?,.]+(?:[eE][+-][0#]+)?")
_DATE_TOKENS = re.compile(r"yyyy|yy|mmmmm|mmmm|mmm|mm|m|dddd|ddd|dd|d|hh|h|ss|s|AM/PM|A/P", re.IGNORECASE)


def shown(value: Any, number_format: str | None) -> str:
    """``value`` as a cell with ``number_format`` shows it."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return _date(value, number_format or "")
    if not isinstance(value, int | float):
        return str(value)
    code = (number_format or "General").strip()
    if code.lower() == "general" or not code:
        return general(value)
    sections = _split_sections(code)
    section = sections[1] if value < 0 and len(sections) > 1 else sections[0]
    number = abs(value) if value < 0 and len(sections) > 1 else value
    return _number(number, section) or general(value)


def general(value: float) -> str:
    """Excel's General: a whole number without ``.0``, else as many significant digits as fit 11 characters."""
    if float(value).is_integer() and abs(value) < 1e11:
        return str(int(value))
    for digits in range(11, 0, -1):
        text = f"{value:.{digits}g}"
        if len(text.lstrip("-")) <= 11:
            return text
    return f"{value:.5E}"


def _split_sections(code: str) -> list[str]:
    sections: list[str] = []
    current: list[str] = []
    quoted = False
    for char in code:
        if char == '"':
            quoted = not quoted
        if char == ";" and not quoted:
            sections.append("".join(current))
            current = []
        else:
            current.append(char)
    sections.append("".join(current))
    return sections


def _number(value: float, section: str) -> str | None:
    plain = _BRACKETS.sub("", section)
    if "/" in plain or "@" in plain:
        return None  # fractions and text formats: General
    literals: list[str] = []

    def keep(match: re.Match[str]) -> str:
        literals.append(match.group(1) if match.group(1) is not None else (match.group(2) or ""))
        return chr(0xE000 + len(literals) - 1)  # a private-use character: no digit the number pattern could take

    marked = _QUOTED.sub(keep, plain)
    found = _NUMBER.search(marked)
    if found is None:
        return None
    pattern = found.group(0)
    percent = marked.count("%")
    scaled = value * (100 ** percent)
    mantissa, _, exponent = pattern.upper().partition("E")
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    if exponent:
        text = f"{scaled:.{decimals}E}"
        head, _, power = text.partition("E")
        text = f"{head}E{power[0]}{int(power[1:]):0{len(exponent) - 1}d}"
    else:
        text = f"{scaled:,.{decimals}f}" if "," in mantissa.split(".")[0] else f"{scaled:.{decimals}f}"
        if mantissa.endswith(","):  # a trailing comma scales by a thousand
            text = f"{scaled / 1000 ** (len(mantissa) - len(mantissa.rstrip(','))):,.{decimals}f}"
    out = marked[: found.start()] + text + marked[found.end():]
    return re.sub("[\ue000-\uf8ff]", lambda m: literals[ord(m.group(0)) - 0xE000], out)


def _date(value: Any, code: str) -> str:
    plain = _QUOTED.sub(lambda m: m.group(1) or m.group(2) or "", _BRACKETS.sub("", _split_sections(code)[0]))
    if not _DATE_TOKENS.search(plain) or plain.lower() == "general":
        return value.isoformat(sep=" ") if isinstance(value, datetime.datetime) else value.isoformat()
    twelve = bool(re.search(r"AM/PM|A/P", plain, re.IGNORECASE))
    tokens = list(_DATE_TOKENS.finditer(plain))
    out, position = [], 0
    for index, token in enumerate(tokens):
        out.append(plain[position: token.start()])
        out.append(_date_token(value, token.group(0), tokens, index, twelve))
        position = token.end()
    out.append(plain[position:])
    return "".join(out)


def _date_token(value: Any, token: str, tokens: list[re.Match[str]], index: int, twelve: bool) -> str:
    lower = token.lower()
    hour = getattr(value, "hour", 0)
    if lower in ("am/pm", "a/p"):
        return ("AM" if hour < 12 else "PM") if lower == "am/pm" else ("A" if hour < 12 else "P")
    if lower.startswith("y"):
        return f"{value.year:04d}" if lower == "yyyy" else f"{value.year % 100:02d}"
    if lower.startswith("d"):
        return {"d": str(value.day), "dd": f"{value.day:02d}", "ddd": value.strftime("%a"), "dddd": value.strftime("%A")}[lower]
    if lower.startswith("h"):
        shown_hour = (hour % 12 or 12) if twelve else hour
        return f"{shown_hour:02d}" if lower == "hh" else str(shown_hour)
    if lower.startswith("s"):
        return f"{getattr(value, 'second', 0):02d}" if lower == "ss" else str(getattr(value, "second", 0))
    # m / mm: minutes right after an hour or before a second, else the month
    after_hour = index > 0 and tokens[index - 1].group(0).lower().startswith("h")
    before_second = index + 1 < len(tokens) and tokens[index + 1].group(0).lower().startswith("s")
    if lower in ("m", "mm") and (after_hour or before_second):
        minute = getattr(value, "minute", 0)
        return f"{minute:02d}" if lower == "mm" else str(minute)
    month = value.month
    return {"m": str(month), "mm": f"{month:02d}", "mmm": value.strftime("%b"), "mmmm": value.strftime("%B"),
            "mmmmm": value.strftime("%b")[0]}[lower]

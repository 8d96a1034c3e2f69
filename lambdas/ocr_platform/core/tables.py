"""Tables in result.json: a table's cells as text, and a table that continues on the next page merged into one.

A long table printed over several pages comes back from a layout engine as one ``table`` block per page. When
the table ending one page goes on as the first table of the next, :func:`merge_continued_tables` makes it one
table with its header once (docs/contracts.md, "Block"):

- the block where it starts (the *head*) keeps its place and its ``text`` (what is on its page), and its
  ``html`` becomes the whole table: its own rows, then each continuation's rows less the rows that repeat
  the header;
- each continuation keeps its own ``html``, ``text`` and ``bbox`` (what is on its page, so a page's text and
  geometry stay true) and says where the table is: ``continued_from`` ``{"page", "block", "header_rows"}``,
  the head's page number and index in that page's blocks, and how many of its own first rows repeat the
  header (left out of the merged table);
- the pages' ``markdown`` shows the table once: the head's page writes the whole table where its part was,
  and each continuation's page has only a comment there (:func:`continuation_note`). Read in page order, the
  Markdown has the table once, with its header once.

A table continues on the next page when (the rules of PaddleX 3.7's ``merge_table``, adapted from MinerU):
the next page is the next page of the document; the table is the last block of its page, but for footers,
page numbers and footnotes (``TRAILING_LABELS``); the other is the first table of the next page, after only
headers, page numbers or a line that says the table is continued (``LEADING_LABELS``, ``CONTINUED_WORDS``);
both have the same number of columns (spans counted); their widths on their pages differ by under
``WIDTH_TOLERANCE``; and the next part's first rows either repeat the header (they are dropped; compared
without spaces, as OCR may read them a little differently) or are no header at all (a part that starts with
a header row of its own, ``<th>`` cells, is another table).

The merge is pure and repeatable: it runs wherever pages are put together (a whole job, a split job's
chunks after their merge, the GPU completion), and on pages already merged it changes nothing; a chain
that a chunk merged goes on into the previous chunk's table when the chunks are joined.

>>> head = {"label": "table", "html": "<table><tr><th>Item</th><th>Qty</th></tr><tr><td>Tea</td><td>4</td></tr></table>", "text": "Item\\tQty\\nTea\\t4"}
>>> part = {"label": "table", "html": "<table><tr><th>Item</th><th>Qty</th></tr><tr><td>Jam</td><td>2</td></tr></table>", "text": "Item\\tQty\\nJam\\t2"}
>>> pages = [{"page": 1, "width": 100, "blocks": [head], "markdown": head["html"]},
...          {"page": 2, "width": 100, "blocks": [{"label": "number", "text": "2"}, part], "markdown": "2\\n\\n" + part["html"]}]
>>> merge_continued_tables(pages)
1
>>> html_table_text(head["html"])
'Item\\tQty\\nTea\\t4\\nJam\\t2'
>>> part["continued_from"], pages[1]["markdown"]
({'page': 1, 'block': 0, 'header_rows': 1}, '2\\n\\n<!-- table continued from page 1 -->')
>>> merge_continued_tables(pages)
0
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from html import unescape
from html.parser import HTMLParser
from typing import Any

from ocr_platform.core.results import Block, ContinuedFrom, Page

#: Blocks that may follow a table on its page when the table goes on on the next page (PP-DocLayout's and
#: the CDLA layout model's labels for page furniture).
TRAILING_LABELS = frozenset({"footer", "footer_image", "number", "footnote", "vision_footnote", "seal", "aside_text"})
#: Blocks that may come before the table's next part on the next page.
LEADING_LABELS = frozenset({"header", "header_image", "number", "seal", "aside_text"})
#: Words that make a block before the next part skippable: "Table 3 (continued)".
CONTINUED_WORDS = ("continued", "cont'd", "cont’d", "(cont.)", "续", "續")
#: How much the two parts' widths, as shares of their pages' widths, may differ (a share of the narrower).
WIDTH_TOLERANCE = 0.1
#: At most this many first rows are compared as a repeated header.
MAX_HEADER_ROWS = 5
#: How alike two rows' text must be (``difflib`` ratio, spaces removed) to count as the same header row.
SAME_ROW = 0.9

_TABLE = re.compile(r"<table\b.*?</table\s*>", re.IGNORECASE | re.DOTALL)
_TABLE_START = re.compile(r"<table\b", re.IGNORECASE)
_ROW = re.compile(r"<tr\b.*?</tr\s*>", re.IGNORECASE | re.DOTALL)
_OPEN_TAG = re.compile(r"<(\w+)\b[^>]*>\s*$")


@dataclass
class _Cell:
    text: str = ""
    colspan: int = 1
    rowspan: int = 1
    header: bool = False


class _Rows(HTMLParser):
    """The cells of each ``<tr>`` of an HTML table: text, spans and whether it is a header cell."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[_Cell]] = []
        self.in_head = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "thead":
            self.in_head = True
        elif tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th") and self.rows:
            spans = {name: _span(value) for name, value in attrs if name in ("colspan", "rowspan")}
            self.rows[-1].append(_Cell(colspan=spans.get("colspan", 1), rowspan=spans.get("rowspan", 1), header=tag == "th" or self.in_head))

    def handle_endtag(self, tag: str) -> None:
        if tag == "thead":
            self.in_head = False

    def handle_data(self, data: str) -> None:
        if self.rows and self.rows[-1]:
            self.rows[-1][-1].text += data


def _span(value: str | None) -> int:
    try:
        return max(1, int(str(value).strip().strip('"')))
    except ValueError:
        return 1


_CELL = re.compile(r"<(t[dh])\b([^>]*)>(.*?)</t[dh]\s*>", re.IGNORECASE | re.DOTALL)
_ROW_START = re.compile(r"<tr\b", re.IGNORECASE)
_CELL_TAG = re.compile(r"<t[dh]\b([^>]*)>", re.IGNORECASE)
_CELL_START = re.compile(r"<t[dh]\b", re.IGNORECASE)
_SPAN = re.compile(r"\b(colspan|rowspan)\s*=\s*[\"']?(\d+)", re.IGNORECASE)
_TAG = re.compile(r"<[^>]*>")
_HEAD = re.compile(r"<thead\b.*?(?:</thead\s*>|$)", re.IGNORECASE | re.DOTALL)


def table_rows(html: str) -> list[list[_Cell]]:
    """The rows of an HTML table, each a list of its cells.

    Where every row and cell closes (what the table models write), the rows are read with regular expressions,
    ten times faster than ``html.parser``, which reads the table otherwise.
    """
    matched = list(_ROW.finditer(html))
    if len(matched) == len(_ROW_START.findall(html)):
        heads = [match.span() for match in _HEAD.finditer(html)]
        rows = [_row_cells(row.group(0), any(start <= row.start() < end for start, end in heads)) for row in matched]
        if all(cells is not None for cells in rows):
            return rows  # type: ignore[return-value]
    parser = _Rows()
    parser.feed(html)
    parser.close()
    return parser.rows


def _row_cells(row: str, in_head: bool) -> list[_Cell] | None:
    """A row's cells, or ``None`` when one of them does not close."""
    cells = list(_CELL.finditer(row))
    if len(cells) != len(_CELL_START.findall(row)):
        return None
    return [_Cell(
        text=unescape(_TAG.sub("", cell.group(3))),
        header=in_head or cell.group(1).lower() == "th",
        **{name.lower(): max(1, int(value)) for name, value in _SPAN.findall(cell.group(2))},
    ) for cell in cells]


def html_table_text(html: str) -> str:
    """A table's text: cells joined by tabs, rows by newlines.

    >>> html_table_text("<table><tr><th>Item</th><th>Price</th></tr><tr><td> Tea </td><td>4.50</td></tr></table>")
    'Item\\tPrice\\nTea\\t4.50'
    """
    return "\n".join("\t".join(cell.text.strip() for cell in row) for row in table_rows(html))


def column_count(html: str) -> int:
    """The table's columns, counting each cell's ``colspan`` and the places earlier rows' ``rowspan`` take (read
    from the cells' tags alone, so a long table costs little).

    >>> column_count('<table><tr><td rowspan="2">a</td><td colspan="2">b</td></tr><tr><td>c</td><td>d</td></tr></table>')
    3
    """
    taken: dict[int, set[int]] = {}
    most = 0
    for r, row in enumerate(_ROW.finditer(html)):
        column, here = 0, taken.pop(r, set())
        for attributes in _CELL_TAG.findall(row.group(0)):
            spans = {name.lower(): max(1, int(value)) for name, value in _SPAN.findall(attributes)}
            while column in here:
                column += 1
            colspan = spans.get("colspan", 1)
            for below in range(r + 1, r + spans.get("rowspan", 1)):
                taken.setdefault(below, set()).update(range(column, column + colspan))
            column += colspan
        most = max(most, column)
    return most


def _row_key(row: Sequence[_Cell]) -> str:
    return "|".join("".join(unicodedata.normalize("NFKC", cell.text).split()) for cell in row)


def _same_row(a: Sequence[_Cell], b: Sequence[_Cell]) -> bool:
    """Whether two rows say the same: the same cells and spans, the same digits, and their text (spaces removed)
    alike to ``SAME_ROW`` (OCR may read a letter or two of a header differently; two data rows that differ only
    in their numbers are not the same).

    >>> cells = lambda *texts: [_Cell(text) for text in texts]
    >>> _same_row(cells("Notice Date", "Company"), cells("Notlce Date", "Company")), _same_row(cells("07/13", "Acme 43"), cells("07/22", "Acme 52"))
    (True, False)
    """
    if len(a) != len(b) or [c.colspan for c in a] != [c.colspan for c in b]:
        return False
    key_a, key_b = _row_key(a), _row_key(b)
    if key_a == key_b:
        return True
    digits_a, digits_b = re.sub(r"\D", "", key_a), re.sub(r"\D", "", key_b)
    return digits_a == digits_b and difflib.SequenceMatcher(None, key_a, key_b).ratio() >= SAME_ROW


def repeated_header_rows(head: Sequence[Sequence[_Cell]], part: Sequence[Sequence[_Cell]]) -> int | None:
    """How many first rows of ``part`` to leave out: rows with no text, then the rows that repeat ``head``'s first
    rows; ``None`` when ``part`` starts with a header row of its own (another table)."""
    blank = 0
    while blank < len(part) and not _row_key(part[blank]).replace("|", ""):
        blank += 1
    repeated = 0
    while repeated < min(MAX_HEADER_ROWS, len(head), len(part) - blank) and _same_row(head[repeated], part[blank + repeated]):
        repeated += 1
    if repeated == 0 and blank < len(part) and part[blank] and all(cell.header for cell in part[blank]):
        return None
    return blank + repeated


def _is_table(block: Block) -> bool:
    return block.get("label") == "table" and bool(_TABLE_START.search(block.get("html", "")))


def _last_table(page: Page) -> int | None:
    """The index of the table that ends ``page`` (only page furniture after it), or ``None``."""
    blocks = page.get("blocks", [])
    for index in range(len(blocks) - 1, -1, -1):
        if _is_table(blocks[index]):
            return index
        if blocks[index].get("label") not in TRAILING_LABELS and blocks[index].get("text", "").strip():
            return None
    return None


def _first_table(page: Page) -> int | None:
    """The index of the table that starts ``page`` (only headers or a "continued" line before it), or ``None``."""
    for index, block in enumerate(page.get("blocks", [])):
        if _is_table(block):
            return index
        text = block.get("text", "").strip()
        if text and block.get("label") not in LEADING_LABELS and not any(word in text.lower() for word in CONTINUED_WORDS):
            return None
    return None


def _width_share(page: Page, block: Block) -> float | None:
    bbox, width = block.get("bbox"), page.get("width")
    if not bbox or len(bbox) < 4 or not width:
        return None
    return (bbox[2] - bbox[0]) / width


def _widths_match(prev: Page, a: Block, nxt: Page, b: Block) -> bool:
    wa, wb = _width_share(prev, a), _width_share(nxt, b)
    if wa is None or wb is None:
        return True
    return min(wa, wb) > 0 and abs(wa - wb) <= WIDTH_TOLERANCE * min(wa, wb)


def _rows_end(html: str) -> int:
    """Where ``html``'s last row ends (rows added there stay in its row group); before ``</table>`` when it has none."""
    end = max(html.rfind("</tr>"), html.rfind("</TR>"))
    if end >= 0:
        return end + len("</tr>")
    rows = list(_ROW.finditer(html))
    if rows:
        return rows[-1].end()
    closing = max(html.rfind("</table"), html.rfind("</TABLE"))
    return closing if closing >= 0 else len(html)


def _first_rows(html: str, count: int = MAX_HEADER_ROWS) -> list[list[_Cell]]:
    """The first ``count`` rows of a table, read without reading the rest (a merged table may be long).

    >>> [[cell.header for cell in row] for row in _first_rows("<table><thead><tr><td>a</td></tr></thead><tr><td>b</td></tr></table>", 1)]
    [[True]]
    """
    end = 0
    for number, match in enumerate(_ROW.finditer(html), start=1):
        end = match.end()
        if number == count:
            break
    return table_rows(html[:end])


def continuation_note(page: int) -> str:
    """What a page's Markdown says in place of a table's part whose whole table is on page ``page``: an HTML
    comment, so the Markdown shows nothing there and a reader (or a client that falls back to a page's text where
    its Markdown is empty) still knows where the table went.

    >>> continuation_note(3)
    '<!-- table continued from page 3 -->'
    """
    return f"<!-- table continued from page {page} -->"


def _replace_table(markdown: str, table_html: str, *, last: bool, note: str = "") -> str | None:
    """``markdown`` with its last (or first) ``<table>`` replaced by ``table_html``'s table, or where that has none
    by ``note`` (with an element left empty around the table removed); ``None`` when it has no table."""
    found = list(_TABLE.finditer(markdown))
    if not found:
        return None
    start, end = (found[-1] if last else found[0]).span()
    replacement = _TABLE.search(table_html)
    if replacement is not None:
        return markdown[:start] + replacement.group(0) + markdown[end:]
    before, after = markdown[:start], markdown[end:]
    while (opening := _OPEN_TAG.search(before)) and (closing := re.match(rf"\s*</{opening.group(1)}\s*>", after, re.IGNORECASE)):
        before, after = before[: opening.start()], after[closing.end():]
    return "\n\n".join(part for part in (before.rstrip(), note, after.lstrip()) if part)


@dataclass
class _Head:
    """A table that starts on ``page`` (its ``block``): its first rows, and the rows its parts add."""

    page: Page
    block: Block
    header: list[list[_Cell]]
    added: list[str]
    #: Whether its page's Markdown has its table, which then becomes the whole table (else no Markdown changes).
    in_markdown: bool


def merge_continued_tables(pages: list[Page]) -> int:
    """Merge each table that continues on the next page into the table where it starts (module docstring), in
    place; how many parts were merged now (0 on pages already merged).

    Each boundary between two pages is decided from the rows of the parts either side and the head's first rows,
    and each head's HTML is written once at the end, so a table over 2,000 pages costs what its rows cost.
    """
    by_number = {page["page"]: page for page in pages}
    parts: dict[tuple[int, int], list[tuple[Page, Block]]] = {}  # the parts merged before, by the head they continue
    for page in pages:
        for block in page.get("blocks", []):
            if "continued_from" in block:
                parts.setdefault((block["continued_from"]["page"], block["continued_from"]["block"]), []).append((page, block))
    heads: dict[tuple[int, int], _Head] = {}
    counted: dict[int, int] = {}  # column counts by block: the part after one join is the part before the next

    def columns(block: Block) -> int:
        if id(block) not in counted:
            counted[id(block)] = column_count(block["html"])
        return counted[id(block)]

    merged = 0
    for prev, nxt in zip(pages, pages[1:], strict=False):
        a_index, b_index = _last_table(prev), _first_table(nxt)
        if nxt["page"] != prev["page"] + 1 or a_index is None or b_index is None:
            continue
        a, b = prev["blocks"][a_index], nxt["blocks"][b_index]
        if "continued_from" in b:
            continue  # merged already
        source = a.get("continued_from")
        key = (source["page"], source["block"]) if source else (prev["page"], a_index)
        head = heads.get(key)
        if head is None:
            holder = by_number.get(key[0])
            if holder is None or key[1] >= len(holder.get("blocks", [])) or not _is_table(holder["blocks"][key[1]]):
                continue
            block = holder["blocks"][key[1]]
            in_markdown = _TABLE.search(holder.get("markdown", "")) is not None
            head = _Head(holder, block, _first_rows(block["html"]), [], in_markdown)
        if not _widths_match(prev, a, nxt, b) or not _ROW_START.search(b["html"]) or columns(a) != columns(b):
            continue
        header_rows = repeated_header_rows(head.header, _first_rows(b["html"], 2 * MAX_HEADER_ROWS))
        if header_rows is None:
            continue
        heads[key] = head
        b_html, b_parts = b["html"], parts.pop((nxt["page"], b_index), [])
        rows = [match.group(0) for match in _ROW.finditer(b_html)]
        own = len(rows) - sum(len(_ROW.findall(part["html"])) - part["continued_from"]["header_rows"] for _, part in b_parts)
        head.added.extend(rows[header_rows:])  # its own rows and, where b was a head itself, its parts' rows
        if own < len(rows):
            b["html"] = b_html[: _row_start(b_html, own)] + b_html[_rows_end(b_html):]
        b["continued_from"] = ContinuedFrom(page=key[0], block=key[1], header_rows=header_rows)
        for part_page, part in b_parts:  # b's own parts now continue the head, and their pages' notes say so
            part["continued_from"] = ContinuedFrom(page=key[0], block=key[1], header_rows=part["continued_from"]["header_rows"])
            if head.in_markdown and "markdown" in part_page:
                part_page["markdown"] = part_page["markdown"].replace(continuation_note(nxt["page"]), continuation_note(key[0]), 1)
        note = continuation_note(key[0])
        part_markdown = _replace_table(nxt.get("markdown", ""), "", last=False, note=note) if head.in_markdown else None
        if part_markdown is not None:
            nxt["markdown"] = part_markdown
        merged += 1
    for head in heads.values():
        html = head.block["html"]
        at = _rows_end(html)
        head.block["html"] = html[:at] + "".join(head.added) + html[at:]
        if head.in_markdown:
            head.page["markdown"] = _replace_table(head.page["markdown"], head.block["html"], last=True) or head.page["markdown"]
    return merged


def _row_start(html: str, index: int) -> int:
    """Where row ``index`` (0-based) of ``html`` starts."""
    for number, match in enumerate(_ROW.finditer(html)):
        if number == index:
            return match.start()
    return _rows_end(html)


def merged_tables(pages: Sequence[Page]) -> list[dict[str, Any]]:
    """Where each merged table starts and which pages it runs over (for logs and tests).

    >>> merged_tables([{"page": 1, "blocks": [{"label": "table"}]}, {"page": 2, "blocks": [{"continued_from": {"page": 1, "block": 0, "header_rows": 1}}]}])
    [{'page': 1, 'block': 0, 'pages': [1, 2]}]
    """
    chains: dict[tuple[int, int], list[int]] = {}
    for page in pages:
        for block in page.get("blocks", []):
            source = block.get("continued_from")
            if source:
                chains.setdefault((source["page"], source["block"]), [source["page"]]).append(page["page"])
    return [{"page": p, "block": b, "pages": sorted(set(numbers))} for (p, b), numbers in sorted(chains.items())]

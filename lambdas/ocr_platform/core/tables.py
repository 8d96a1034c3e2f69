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
  and each continuation's page leaves its part out. Read in page order, the Markdown has the table once,
  with its header once.

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
({'page': 1, 'block': 0, 'header_rows': 1}, '2')
>>> merge_continued_tables(pages)
0
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
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


def table_rows(html: str) -> list[list[_Cell]]:
    """The rows of an HTML table, each a list of its cells."""
    parser = _Rows()
    parser.feed(html)
    parser.close()
    return parser.rows


def html_table_text(html: str) -> str:
    """A table's text: cells joined by tabs, rows by newlines.

    >>> html_table_text("<table><tr><th>Item</th><th>Price</th></tr><tr><td> Tea </td><td>4.50</td></tr></table>")
    'Item\\tPrice\\nTea\\t4.50'
    """
    return "\n".join("\t".join(cell.text.strip() for cell in row) for row in table_rows(html))


def column_count(rows: Sequence[Sequence[_Cell]]) -> int:
    """The table's columns, counting each cell's ``colspan`` and the places earlier rows' ``rowspan`` take.

    >>> column_count(table_rows('<table><tr><td rowspan="2">a</td><td colspan="2">b</td></tr><tr><td>c</td><td>d</td></tr></table>'))
    3
    """
    taken: dict[int, set[int]] = {}
    most = 0
    for r, row in enumerate(rows):
        column = 0
        for cell in row:
            while column in taken.get(r, set()):
                column += 1
            for below in range(r, r + cell.rowspan):
                taken.setdefault(below, set()).update(range(column, column + cell.colspan))
            column += cell.colspan
            most = max(most, column)
    return most


def _row_key(row: Sequence[_Cell]) -> str:
    return "|".join("".join(unicodedata.normalize("NFKC", cell.text).split()) for cell in row)


def _same_row(a: Sequence[_Cell], b: Sequence[_Cell]) -> bool:
    if len(a) != len(b) or [c.colspan for c in a] != [c.colspan for c in b]:
        return False
    key_a, key_b = _row_key(a), _row_key(b)
    return key_a == key_b or difflib.SequenceMatcher(None, key_a, key_b).ratio() >= SAME_ROW


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
    return block.get("label") == "table" and bool(_TABLE.search(block.get("html", "")))


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


def _with_rows(html: str, rows: Sequence[str], *, keep: int | None = None) -> str:
    """``html`` with its rows after the first ``keep`` removed (all kept when ``None``), then ``rows`` added after
    its last row (in the same row group)."""
    spans = [m.span() for m in _ROW.finditer(html)]
    if keep is not None and keep < len(spans):
        cut_from, cut_to = spans[keep][0], spans[-1][1]
        html = html[:cut_from] + html[cut_to:]
        spans = spans[:keep]
    if not rows:
        return html
    at = spans[-1][1] if spans else _TABLE.search(html).end() - len("</table>")  # type: ignore[union-attr]
    return html[:at] + "".join(rows) + html[at:]


def _own_row_count(pages_by_number: dict[int, Page], head_page: int, head_index: int, html: str) -> int:
    """How many of a head's merged rows are its own: all less those its continuations added."""
    added = 0
    for page in pages_by_number.values():
        for block in page.get("blocks", []):
            source = block.get("continued_from")
            if source and (source["page"], source["block"]) == (head_page, head_index):
                added += len(_ROW.findall(block.get("html", ""))) - source["header_rows"]
    return len(_ROW.findall(html)) - added


def _replace_table(markdown: str, table_html: str, *, last: bool) -> str | None:
    """``markdown`` with its last (or first) ``<table>`` replaced by ``table_html``'s table (removed when it is
    empty, with an element left empty around it); ``None`` when it has no table."""
    found = list(_TABLE.finditer(markdown))
    if not found:
        return None
    start, end = (found[-1] if last else found[0]).span()
    replacement = _TABLE.search(table_html)
    if replacement is not None:
        return markdown[:start] + replacement.group(0) + markdown[end:]
    before, after = markdown[:start], markdown[end:]
    while (opening := _OPEN_TAG.search(before)) and re.match(rf"\s*</{opening.group(1)}\s*>", after, re.IGNORECASE):
        after = after[re.match(rf"\s*</{opening.group(1)}\s*>", after, re.IGNORECASE).end():]  # type: ignore[union-attr]
        before = before[: opening.start()]
    before, after = before.rstrip(), after.lstrip()
    return f"{before}\n\n{after}" if before and after else before or after


def merge_continued_tables(pages: list[Page]) -> int:
    """Merge each table that continues on the next page into the table where it starts (module docstring), in
    place; how many parts were merged now (0 on pages already merged)."""
    by_number = {page["page"]: page for page in pages}
    merged = 0
    for prev, nxt in zip(pages, pages[1:], strict=False):
        if nxt["page"] != prev["page"] + 1:
            continue
        a_index, b_index = _last_table(prev), _first_table(nxt)
        if a_index is None or b_index is None:
            continue
        a, b = prev["blocks"][a_index], nxt["blocks"][b_index]
        if "continued_from" in b:
            continue  # merged already
        source = a.get("continued_from")
        head_page, head_index = (source["page"], source["block"]) if source else (prev["page"], a_index)
        head_holder = by_number.get(head_page)
        if head_holder is None or head_index >= len(head_holder.get("blocks", [])):
            continue
        head = head_holder["blocks"][head_index]
        head_rows, a_rows, b_rows = table_rows(head["html"]), table_rows(a["html"]), table_rows(b["html"])
        if not a_rows or not b_rows or column_count(a_rows) != column_count(b_rows) or not _widths_match(prev, a, nxt, b):
            continue
        header_rows = repeated_header_rows(head_rows, b_rows)
        if header_rows is None:
            continue
        b_html = b["html"]
        own = _own_row_count(by_number, nxt["page"], b_index, b_html)
        head["html"] = _with_rows(head["html"], [m.group(0) for m in _ROW.finditer(b_html)][header_rows:])
        b["html"] = _with_rows(b_html, [], keep=own)
        b["continued_from"] = ContinuedFrom(page=head_page, block=head_index, header_rows=header_rows)
        for page in pages:  # the parts that continued ``b`` now continue the head
            for block in page.get("blocks", []):
                later = block.get("continued_from")
                if later and (later["page"], later["block"]) == (nxt["page"], b_index) and block is not b:
                    block["continued_from"] = ContinuedFrom(page=head_page, block=head_index, header_rows=later["header_rows"])
        head_markdown = _replace_table(head_holder.get("markdown", ""), head["html"], last=True)
        part_markdown = _replace_table(nxt.get("markdown", ""), "", last=False)
        if head_markdown is not None and part_markdown is not None:
            head_holder["markdown"] = head_markdown
            nxt["markdown"] = part_markdown
        merged += 1
    return merged


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

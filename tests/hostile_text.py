"""Documents whose text is markup: a script, an event handler, an escaped tag, a ``javascript:`` link, stray angle
brackets, in every place a reader takes text from (cells, paragraphs, titles, alt texts, names), made here with
the libraries that write each format; and ``live_elements``, which renders a result's Markdown as a browser would
see it (CommonMark with HTML on, markdown-it-py; then an HTML5 parser, html5lib) and lists what became markup."""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path

#: Text written in documents; each piece must come out as these very characters.
PAYLOADS = (
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(2)>",
    "&lt;iframe src=javascript:alert(3)&gt;",
    "[click](javascript:alert(4))",
    ">b<",
)
#: One line holding all of them.
PAYLOAD = " ".join(PAYLOADS)
_PNG = Path(__file__).parent / "documents" / "public" / "office" / "python-powered.png"


def docx(path: Path) -> Path:
    """A DOCX with the payload as its title, heading, paragraph, table cell, a nested table's cell, header, footer,
    comment and a picture's alt text."""
    import docx as python_docx

    document = python_docx.Document()
    document.add_heading(f"Title {PAYLOAD}", level=0)
    document.add_heading(f"Heading {PAYLOAD}", level=1)
    paragraph = document.add_paragraph(f"Paragraph {PAYLOAD}")
    document.add_comment(paragraph.runs, text=f"Comment {PAYLOAD}", author="Reviewer")
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text = f"Cell {PAYLOAD}"
    table.cell(0, 1).text = PAYLOADS[4]
    table.cell(1, 0).add_table(rows=1, cols=1).cell(0, 0).text = f"Nested {PAYLOAD}"
    document.add_picture(str(_PNG))
    document.inline_shapes[0]._inline.docPr.set("descr", f"Alt {PAYLOAD}")
    section = document.sections[0]
    section.header.paragraphs[0].text = f"Header {PAYLOAD}"
    section.footer.paragraphs[0].text = f"Footer {PAYLOAD}"
    document.save(str(path))
    return path


def pptx(path: Path) -> Path:
    """A PPTX with the payload as a slide title, a body item, a text box, a table cell, a picture's alt text and the
    slide's notes."""
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = f"Title {PAYLOAD}"
    slide.placeholders[1].text = f"Item {PAYLOAD}"
    box = slide.shapes.add_textbox(Inches(1), Inches(5), Inches(6), Inches(1))
    box.text_frame.text = f"Box {PAYLOAD}"
    table = slide.shapes.add_table(1, 2, Inches(1), Inches(6), Inches(6), Inches(1)).table
    table.cell(0, 0).text = f"Cell {PAYLOAD}"
    table.cell(0, 1).text = PAYLOADS[4]
    picture = slide.shapes.add_picture(str(_PNG), Inches(7), Inches(6))
    picture._element.nvPicPr.cNvPr.set("descr", f"Alt {PAYLOAD}")
    slide.notes_slide.notes_text_frame.text = f"Note {PAYLOAD}"
    deck.save(str(path))
    return path


def xlsx(path: Path) -> Path:
    """An XLSX with the payload in cells (a shared string, an inline formula result) and in a sheet's name."""
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "<b onclick=alert(5)>"
    sheet["A1"] = f"Cell {PAYLOAD}"
    sheet["B1"] = PAYLOADS[4]
    sheet["A2"] = 4.5
    sheet["B2"] = '="<i>"&"x</i>"'
    book.save(str(path))
    return path


def html(path: Path) -> Path:
    """An HTML page whose text is the payload, escaped as HTML writes text: a title, a heading, a paragraph, a list item, a table cell, a
    picture's alt text and a link's text."""
    escaped = PAYLOAD.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    data = base64.b64encode(_PNG.read_bytes()).decode()
    path.write_text(
        f"<!DOCTYPE html><html><head><title>{escaped}</title></head><body><h1>Heading {escaped}</h1><p>Paragraph {escaped}</p>"
        f"<ul><li>Item {escaped}</li></ul><table><tr><th>Head {escaped}</th></tr><tr><td>Cell {escaped}</td></tr></table>"
        f'<p><img src="https://example.com/x.png" alt="Alt {escaped}"></p><p><img src="data:image/png;base64,{data}" alt="Alt {escaped}"></p>'
        f'<p><a href="https://example.com/">Link {escaped}</a></p></body></html>', encoding="utf-8")
    return path


def csv(path: Path) -> Path:
    """A CSV whose header and cells are the payload (quoted, as the csv module writes it)."""
    import csv as csv_module

    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv_module.writer(handle)
        writer.writerow(["Name", f"Head {PAYLOAD}"])
        writer.writerow([f"Cell {PAYLOAD}", PAYLOADS[4]])
    return path


def markdown(path: Path) -> Path:
    """A Markdown file with the payload as a heading, a paragraph, a list item and a table cell."""
    path.write_text(f"# Title {PAYLOAD}\n\nParagraph {PAYLOAD}\n\n- Item {PAYLOAD}\n\n| a | b |\n|---|---|\n| Cell {PAYLOAD} | x |\n")
    return path


#: The payload of a plain text file: without the escaped tag, which makes a text an HTML fragment (read as HTML).
TEXT_PAYLOAD = " ".join(p for p in PAYLOADS if "&lt;" not in p)


def text(path: Path) -> Path:
    """A plain text file of two paragraphs of ``TEXT_PAYLOAD``."""
    path.write_text(f"Paragraph {TEXT_PAYLOAD}\n\nAnother {TEXT_PAYLOAD}\n")
    return path


def eml(path: Path) -> Path:
    """An email with the payload as its subject and sender's name, in its HTML body (escaped) and its text body."""
    from email.message import EmailMessage

    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = f'"{PAYLOADS[1]}" <a@example.com>', "b@example.com", f"Subject {PAYLOAD}"
    message.set_content(f"Body {PAYLOAD}")
    escaped = PAYLOAD.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    message.add_alternative(f"<p>Body {escaped}</p>", subtype="html")
    path.write_bytes(bytes(message))
    return path


def ods(path: Path) -> Path:
    from tests.other_documents import ods as make

    return make(path, text=f"Cell {PAYLOAD}")


def odp(path: Path) -> Path:
    from tests.other_documents import odp as make

    return make(path, title=f"Title {PAYLOAD}", body=f"Body {PAYLOAD}")


def shown_payload(kind: str) -> str:
    """What a reader shows of the payload a ``kind`` file holds: a Markdown file's ``&lt;`` is Markdown's own way to
    write ``<``; a text file holds ``TEXT_PAYLOAD``."""
    if kind == "md":
        return PAYLOAD.replace("&lt;", "<").replace("&gt;", ">")
    return TEXT_PAYLOAD if kind == "txt" else PAYLOAD


MAKERS: dict[str, Callable[[Path], Path]] = {"docx": docx, "pptx": pptx, "xlsx": xlsx, "html": html, "csv": csv, "md": markdown,
                                             "txt": text, "eml": eml, "ods": ods, "odp": odp}


def live_elements(markdown: str) -> list[str]:
    """What of ``markdown`` a browser would run or follow, rendered as CommonMark with raw HTML allowed: each
    ``script``, ``iframe``, ``object``, ``embed``, ``svg`` or ``style`` element, each element with an event handler,
    each link or source to a ``javascript:`` URL, and each element a payload names (``b``, ``i``, ``img``
    other than a picture placeholder); empty when every character of the documents stayed text."""
    import html5lib
    from markdown_it import MarkdownIt

    rendered = MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)
    tree = html5lib.parse(rendered, namespaceHTMLElements=False)
    found = []
    for element in tree.iter():
        tag = str(element.tag)
        attributes = {str(k).lower(): str(v) for k, v in element.attrib.items()}
        if tag in ("script", "iframe", "object", "embed", "svg", "style", "b", "i"):
            found.append(tag)
        elif tag == "img" and not attributes.get("src", "").startswith(("images/", "figures/")):
            found.append(f"img src={attributes.get('src')!r}")
        if any(name.startswith("on") for name in attributes):
            found.append(f"{tag} with {sorted(attributes)}")
        if any(value.strip().lower().startswith("javascript:") for value in attributes.values()):
            found.append(f"{tag} to {attributes}")
    return found


def shown_text(markdown: str) -> str:
    """The text a browser shows of ``markdown`` (CommonMark, HTML on), white space collapsed."""
    import html5lib
    from markdown_it import MarkdownIt

    rendered = MarkdownIt("commonmark", {"html": True}).render(markdown)
    tree = html5lib.parse(rendered, namespaceHTMLElements=False)
    return " ".join("".join(tree.itertext()).split())

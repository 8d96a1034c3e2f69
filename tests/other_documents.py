"""The formats read besides DOCX, PPTX, XLSX and HTML: the public files in tests/documents/public/more/ (sources and
licences in its README), and the inputs made here where no public file shows what a test needs: an email with a
PDF, a picture, a DOCX, a forwarded message and an unreadable file attached; an OpenDocument spreadsheet and
presentation (odfdo writes them as LibreOffice does); text files."""

from __future__ import annotations

from email.message import EmailMessage
from pathlib import Path

from tests import office_documents as od

MORE = Path(__file__).parent / "documents" / "public" / "more"
PUBLIC = Path(__file__).parent / "documents" / "public"
#: unstructured's example: Excel 97-2003, three sheets ("Example Test" holds quiz questions: "What is 2+2?").
XLS = MORE / "unstructured-tests-example.xls"
#: unstructured's example: Word 97-2003, "These are a few of my favorite things:", a list, "DOYLESTOWN, PA 18901".
DOC = MORE / "unstructured-simple.doc"
#: unstructured's example: PowerPoint 97-2003, one slide "Adding a Bullet Slide", its text in the slide's shapes.
PPT = MORE / "unstructured-fake-power-point.ppt"
#: unstructured's example: "Lorem ipsum dolor sit amet." and a 4 x 4 table (Header row, Mon, Wed, Fri …).
ODT = MORE / "unstructured-fake.odt"
#: unstructured's example: RTF, "This is a test document to use for unit tests." and "Important points:".
RTF = MORE / "unstructured-fake-doc.rtf"
#: unstructured's example: Stanley Cup winners by team (Team, Location, Stanley Cups).
CSV = MORE / "unstructured-stanley-cups.csv"
#: markitdown's test EPUB: three chapters of "Test EPUB Document" (author "John Doe").
EPUB = MORE / "markitdown-test.epub"
#: markitdown's test Outlook message: "Test Email Message" from M. C. Kurtuluş, "This is the body of the test email message".
MSG = MORE / "markitdown-test_outlook_msg.msg"
#: unstructured's example: an Outlook message with a text file attached ("fake-attachment.txt": "Hey this is a fake attachment!").
MSG_ATTACHMENT = MORE / "unstructured-fake-email-attachment.msg"
#: unstructured's example: a MIME digest of three messages ("First Message" … "Third Message").
EML_DIGEST = MORE / "unstructured-mime-multipart-digest.eml"
#: A one-page PDF with a text layer: "First page" (pikepdf's four pages; the first).
PDF_PAGES = PUBLIC / "pikepdf-fourpages.pdf"


def email_with_attachments(path: Path, *, pdf: bytes | None = None, picture: bytes | None = None) -> Path:
    """An email (HTML body with an inline picture) with a PDF, a picture, a DOCX, a forwarded message and an MP3
    attached."""
    forwarded = EmailMessage()
    forwarded["From"], forwarded["To"], forwarded["Subject"] = "Bea <bea@example.com>", "ann@example.com", "Minutes of Monday"
    forwarded.set_content("The minutes say the budget was approved.")
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = "Ann <ann@example.com>", "desk@example.com", "Invoice and scans"
    message["Date"] = "Tue, 01 Oct 2024 12:34:56 -0500"
    message.set_content("Please find the invoice attached.")
    message.add_alternative('<p>Please find the <b>invoice</b> attached.</p><p><img src="cid:logo1" alt="Company logo"></p>', subtype="html")
    html_part = message.get_payload()[1]
    html_part.add_related(od.PICTURE.read_bytes(), maintype="image", subtype="png", cid="<logo1>")
    message.add_attachment(pdf if pdf is not None else PDF_PAGES.read_bytes(), maintype="application", subtype="pdf", filename="pages.pdf")
    message.add_attachment(picture if picture is not None else od.PICTURE.read_bytes(), maintype="image", subtype="png", filename="scan.png")
    message.add_attachment(od.DOCX_TEXT.read_bytes(), maintype="application", subtype="vnd.openxmlformats-officedocument.wordprocessingml.document",
                           filename="report.docx")
    message.add_attachment(forwarded)
    message.add_attachment(b"ID3\x04\x00" + b"\x00" * 200, maintype="audio", subtype="mpeg", filename="voicemail.mp3")
    path.write_bytes(bytes(message))
    return path


def ods(path: Path, text: str = "Tea & cake") -> Path:
    """An OpenDocument spreadsheet: sheet "Prices" with a text cell, a number shown with two decimals, a text after
    300 empty repeated rows' gap; sheet "Empty"."""
    import odfdo

    document = odfdo.Document("spreadsheet")
    document.body.clear()
    prices = odfdo.Table("Prices")
    prices.set_value("A1", text)
    prices.set_cell("B1", odfdo.Cell(4.5, text="4.50"))
    prices.set_value("A3", "after a gap")
    document.body.append(prices)
    document.body.append(odfdo.Table("Empty"))
    document.save(str(path))
    return path


def odp(path: Path, title: str = "Quarterly results", body: str = "Revenue grew") -> Path:
    """An OpenDocument presentation: one slide with a title frame, a text frame and speaker notes."""
    import odfdo

    document = odfdo.Document("presentation")
    document.body.clear()
    page = odfdo.DrawPage("page1", name="Slide 1")
    page.append(odfdo.Frame.text_frame(title, size=("20cm", "3cm"), position=("1cm", "1cm"), presentation_class="title"))
    page.append(odfdo.Frame.text_frame(body, size=("20cm", "10cm"), position=("1cm", "5cm")))
    notes = odfdo.Element.from_tag(
        "<presentation:notes><draw:frame><draw:text-box><text:p>Say it slowly</text:p></draw:text-box></draw:frame></presentation:notes>")
    page.append(notes)
    document.body.append(page)
    document.save(str(path))
    return path

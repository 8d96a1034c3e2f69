"""A PDF's form fields: what a filled-in AcroForm holds in its fields rather than in the page's text.

A form filled in on screen keeps each answer in a field (a widget annotation), not in the page's content
stream: OCR sees the answer only if the viewer drew an appearance for it, and then without the field's
name. ``read_form_fields`` reads every widget of the selected pages with pypdfium2's form API
(``FPDFDOC_InitFormFillEnvironment``, ``FPDFAnnot_GetFormFieldName`` / ``Type`` / ``Value`` /
``ExportValue``, ``FPDFAnnot_IsChecked``) and returns, per page, one ``FormField`` per widget:

- ``name``: the field's fully qualified name (``parent.child``);
- ``type``: ``text``, ``checkbox``, ``radio``, ``combobox``, ``listbox``, ``button``, ``signature`` or ``unknown``;
- ``value``: a text or choice field's value; for a checkbox or radio button, the value this box stands for
  (its export value, e.g. ``Yes`` or ``Male``);
- ``selected``: checkboxes and radio buttons only, whether this box is ticked;
- ``bbox``: ``[x0, y0, x1, y1]`` in points from the page's top-left corner as it is displayed (``/Rotate``
  and the crop box applied); ``at_scale`` turns it into the rendered page's pixels, like the lines' polygons.

>>> from pathlib import Path
>>> form = Path(__file__).parents[3] / "tests/documents/public/pypdf-libreoffice-form.pdf"
>>> fields = read_form_fields(form, [1])[1]
>>> [(f["name"], f["value"]) for f in fields if f["value"] and f["type"] == "text"]
[('First Name', 'Alice'), ('First Name_2', 'Bob')]
"""

from __future__ import annotations

import ctypes
import logging
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ocr_platform.core.results import FormField

logger = logging.getLogger(__name__)


#: pdfium's ``FPDF_FORMFIELD_*`` numbers and the names a result uses for them.
_TYPES = {1: "button", 2: "checkbox", 3: "radio", 4: "combobox", 5: "listbox", 6: "text", 7: "signature"}
_CHECKABLE = frozenset({"checkbox", "radio"})
_WIDGET = 20  # FPDF_ANNOT_WIDGET


def read_form_fields(path: Path | str, pages: Iterable[int]) -> dict[int, list[FormField]]:
    """The form fields of each of ``pages`` (1-based) of the PDF at ``path`` that has any, in points.

    A PDF without an AcroForm gives ``{}`` without a page being loaded. An XFA-only form (no AcroForm
    widgets) has no fields pdfium can list and gives ``{}`` too.
    """
    import pypdfium2 as pdfium
    import pypdfium2.raw as raw

    pdf = pdfium.PdfDocument(str(path))
    try:
        with warnings.catch_warnings():  # an XFA form in a build without XFA: its AcroForm part is still read
            warnings.simplefilter("ignore")
            pdf.init_forms()
        if pdf.formenv is None:
            return {}
        form = pdf.formenv.raw
        found: dict[int, list[FormField]] = {}
        for number in pages:
            try:
                page = pdf[number - 1]
            except pdfium.PdfiumError:  # a page pdfium cannot load has no fields to read (the page loop fails it)
                continue
            try:
                fields = [f for f in (_field(raw, form, page, i) for i in range(raw.FPDFPage_GetAnnotCount(page.raw))) if f]
            finally:
                page.close()
            if fields:
                found[number] = fields
        return found
    finally:
        pdf.close()


def page_form_fields(path: Path | str, pages: Iterable[int]) -> dict[int, list[FormField]]:
    """``read_form_fields``, or ``{}`` (logged) when pdfium cannot list them: fields never fail a job."""
    try:
        return read_form_fields(path, pages)
    except Exception:
        logger.warning("Could not read the form fields of %s; the pages carry none", path, exc_info=True)
        return {}


def at_scale(fields: list[FormField], scale: float) -> list[FormField]:
    """``fields`` with their boxes in the pixels of a page rendered at ``scale``.

    >>> at_scale([{"name": "a", "type": "text", "value": "x", "bbox": [10.0, 20.0, 30.0, 40.0]}], 2.0)[0]["bbox"]
    [20.0, 40.0, 60.0, 80.0]
    """
    return [{**field, "bbox": [round(v * scale, 2) for v in field["bbox"]]} for field in fields]


def _field(raw: Any, form: Any, page: Any, index: int) -> FormField | None:
    annot = raw.FPDFPage_GetAnnot(page.raw, index)
    if not annot:
        return None
    try:
        if raw.FPDFAnnot_GetSubtype(annot) != _WIDGET:
            return None
        kind = _TYPES.get(raw.FPDFAnnot_GetFormFieldType(form, annot), "unknown")
        getter = raw.FPDFAnnot_GetFormFieldExportValue if kind in _CHECKABLE else raw.FPDFAnnot_GetFormFieldValue
        field: FormField = {
            "name": _text(raw.FPDFAnnot_GetFormFieldName, form, annot),
            "type": kind,
            "value": _text(getter, form, annot),
            "bbox": _box(raw, page, annot),
        }
        if kind in _CHECKABLE:
            field["selected"] = bool(raw.FPDFAnnot_IsChecked(form, annot))
        return field
    finally:
        raw.FPDFPage_CloseAnnot(annot)


def _text(getter: Any, form: Any, annot: Any) -> str:
    """A UTF-16LE string from one of pdfium's two-call getters (the first call says how many bytes)."""
    size = getter(form, annot, None, 0)
    if size <= 2:
        return ""
    buffer = ctypes.create_string_buffer(size)
    getter(form, annot, ctypes.cast(buffer, ctypes.POINTER(ctypes.c_ushort)), size)
    return buffer.raw[: size - 2].decode("utf-16-le", errors="replace")


def _box(raw: Any, page: Any, annot: Any) -> list[float]:
    """The widget's rectangle in points from the displayed page's top-left corner (``FPDF_PageToDevice``
    at 1 pixel a point, the mapping ``render`` uses)."""
    rect = raw.FS_RECTF()
    raw.FPDFAnnot_GetRect(annot, rect)
    width, height = page.get_size()
    points = []
    for x, y in ((rect.left, rect.top), (rect.right, rect.bottom)):
        dx, dy = ctypes.c_int(), ctypes.c_int()
        # Whole pixels at a 1000x scale, back to points with three decimals.
        raw.FPDF_PageToDevice(page.raw, 0, 0, round(width * 1000), round(height * 1000), 0, x, y, ctypes.byref(dx), ctypes.byref(dy))
        points.append((dx.value / 1000, dy.value / 1000))
    (x0, y0), (x1, y1) = points
    return [round(min(x0, x1), 2), round(min(y0, y1), 2), round(max(x0, x1), 2), round(max(y0, y1), 2)]

"""Messages, storage layout, routing and result validation, and docs/contracts.md documenting each of them.

The second half fails when the code gains a field (job item attribute, result field, error code, bucket
prefix, model, exit status, CLI option, ...) that docs/contracts.md does not document, or loses one it does.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

import ocr_platform
from ocr_platform.cli import commands as cli
from ocr_platform.core import s3_layout
from ocr_platform.core.client_errors import _ACCESS_CODES, ExitStatus, PlatformClientError
from ocr_platform.core.errors import ErrorCode, JobError, JobErrorDict
from ocr_platform.core.results import (
    Block,
    EngineInfo,
    Line,
    OcrResult,
    Page,
    ResultWarning,
    build_result,
    engine_fallback_warning,
    validate_result,
)
from ocr_platform.core.routing import MODEL_TABLE, route
from ocr_platform.core.s3_layout import S3Uri, StorageLayout, safe_file_name
from ocr_platform.core.words import Word
from ocr_platform.jobs.messages import InvalidMessageError, JobMessage, JobMessageBody, parse_job_message
from ocr_platform.jobs.store import CHUNK_CLAIM_ATTRIBUTE_PATTERNS, CallbackAttempt, JobItem, JobStatus, JobStore, NewJob
from ocr_platform.local.stack import StackInfo
from tests.conftest import Platform

GOOD = {"job_id": "job-1", "model": "pp-ocrv5", "input": "s3://bucket/documents/job-1/a.pdf"}


def test_message_defaults_and_round_trip() -> None:
    message = parse_job_message(json.dumps({**GOOD, "pages": "1-3,7", "options": {"x": 1}}))
    assert message == JobMessage("job-1", "pp-ocrv5", GOOD["input"], "en", "1-3,7", {"x": 1})
    assert parse_job_message(message.to_json()) == message


@pytest.mark.parametrize(
    ("change", "fragment", "has_job_id"),
    [
        ({"job_id": "../etc"}, "'job_id'", False),
        ({"job_id": None}, "'job_id'", False),
        ({"model": ""}, "'model'", True),
        ({"input": "ftp://example.com/a.pdf"}, "'input'", True),
        ({"input": "https://example.com/" + "a" * 2048}, "'input'", True),
        ({"callback_url": "ftp://example.com/hook"}, "'callback_url'", True),
        ({"callback_url": 7}, "'callback_url'", True),
        ({"input": "s3://bucket-only"}, "'input'", True),
        ({"language": "EN; drop"}, "'language'", True),
        ({"pages": "1-3,x"}, "'pages'", True),
        ({"pages": "0-2"}, "1-based", True),
        ({"options": [1]}, "'options'", True),
    ],
)
def test_invalid_messages_say_which_field_is_wrong(change: dict, fragment: str, has_job_id: bool) -> None:
    with pytest.raises(InvalidMessageError) as info:
        parse_job_message({**GOOD, **change})
    assert fragment in str(info.value)
    assert (info.value.job_id == "job-1") is has_job_id


def test_routing_table_matches_the_design() -> None:
    assert {name: spec.backend for name, spec in MODEL_TABLE.items()} == {
        "pp-ocrv5": "lambda", "pp-ocrv6": "lambda", "pp-structurev3": "lambda", "paddleocr-vl": "sagemaker"}
    with pytest.raises(JobError) as info:
        route("PP-OCRv5")
    assert info.value.code == "unknown_model"


def test_storage_layout_keys_come_only_from_our_ids() -> None:
    layout = StorageLayout("bkt")
    assert str(layout.document_uri("j1", "../../x/My Scan.PDF")) == "s3://bkt/documents/j1/My_Scan.PDF"
    assert layout.result_uri("j1") == "s3://bkt/results/j1/result.json"
    assert str(layout.async_request_uri("j1")) == "s3://bkt/async/requests/j1.json"
    with pytest.raises(ValueError):
        layout.result_key("../j1")
    assert safe_file_name("...") == "document"
    assert S3Uri.parse("s3://b/a/b.c") == S3Uri("b", "a/b.c")


def test_result_validation_rejects_broken_documents() -> None:
    page = {"page": 1, "width": 10, "height": 10, "scale": 1.0,
            "lines": [{"text": "a", "polygon": [[0, 0], [1, 0], [1, 1], [0, 1]], "score": 1.0}]}
    good = build_result("j", "pp-ocrv5", {"name": "e", "models": [], "version": "1"}, [page, {**page, "page": 2}])
    assert good["text"] == "a\fa"
    assert validate_result(json.loads(json.dumps(good)), job_id="j")["page_count"] == 2
    broken_polygon = json.loads(json.dumps(good))
    broken_polygon["pages"][0]["lines"][0]["polygon"] = [[0, 0]]
    with pytest.raises(JobError, match="polygon"):
        validate_result(broken_polygon)
    with pytest.raises(JobError, match="page_count"):
        validate_result({**good, "page_count": 3})


def test_result_warnings_are_kept_and_checked() -> None:
    line = {"text": "Total", "score": 0.9, "polygon": [[1, 1], [8, 1], [8, 4], [1, 4]]}
    page = {"page": 1, "width": 10, "height": 10, "scale": 1.0, "lines": [line]}
    engine = {"name": "PP-OCRv5", "models": [], "version": "1"}
    assert build_result("j", "pp-ocrv5", engine, [page])["warnings"] == []  # always a list in result.json
    warning = engine_fallback_warning(requested="PP-StructureV3", ran="PP-OCRv5", reason="RuntimeError: no weights")
    doc = json.loads(json.dumps(build_result("j", "pp-structurev3", engine, [page], warnings=[warning])))
    assert validate_result(doc)["warnings"] == [warning]
    older = {key: value for key, value in doc.items() if key != "warnings"}  # an endpoint that writes none
    assert validate_result(older)["warnings"] == []
    with pytest.raises(JobError, match="warning needs string fields"):
        validate_result({**doc, "warnings": [{"code": "engine_fallback"}]})
    with pytest.raises(JobError, match="'warnings' is not a list"):
        validate_result({**doc, "warnings": "engine_fallback"})


def test_a_result_with_no_text_says_so_and_a_merge_with_text_does_not() -> None:
    blank = {"page": 1, "width": 10, "height": 10, "scale": 1.0, "lines": []}
    line = {"text": "Total", "score": 0.9, "polygon": [[1, 1], [8, 1], [8, 4], [1, 4]]}
    engine = {"name": "PP-OCRv5", "models": [], "version": "1"}
    [warning] = build_result("j", "pp-ocrv5", engine, [blank, {**blank, "page": 2}])["warnings"]
    assert (warning["code"], warning["reason"]) == ("no_text", "PP-OCRv5 read 2 pages and found no text on them")
    merged = build_result("j", "pp-ocrv5", engine, [blank, {**blank, "page": 2, "lines": [line]}], warnings=[warning])
    assert merged["warnings"] == []  # a blank chunk's warning does not outlive a merge that found text


# -- docs/contracts.md documents every field the code writes ------------------------------------------
#
# The names come from the code (TypedDicts, dataclasses, enums, the argparse parser, what JobStore writes),
# and each must be a table row of its section in docs/contracts.md; a documented name the code no longer
# has fails too, so the page cannot drift from the code in either direction.

PACKAGE = Path(ocr_platform.__file__).resolve().parent
REPOSITORY = Path(__file__).resolve().parents[2]
CONTRACTS = REPOSITORY / "docs" / "contracts.md"
_HEADING = re.compile(r"^#{2,3} (.+)$", re.MULTILINE)
_CODE_SPAN = re.compile(r"`([^`]+)`")


@dataclass(frozen=True)
class Section:
    """One ``##`` or ``###`` section of docs/contracts.md, up to the next heading."""

    title: str
    body: str

    def rows(self) -> list[list[str]]:
        """The cells of each table body row (header and separator rows left out)."""
        lines = [line.strip() for line in self.body.splitlines() if line.strip().startswith("|")]
        table_rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]
        separator = [all(set(cell) <= set("-: ") for cell in row) for row in table_rows] + [False]
        return [row for i, row in enumerate(table_rows) if not separator[i] and not separator[i + 1]]

    def names(self) -> set[str]:
        """Every backticked name in the first column of the section's tables."""
        return {name for row in self.rows() for name in _CODE_SPAN.findall(row[0])}

    def spans(self) -> set[str]:
        """Every backticked name in the section's text, fenced code blocks left out."""
        return set(_CODE_SPAN.findall(re.sub(r"^```.*?^```", "", self.body, flags=re.MULTILINE | re.DOTALL)))

    def row_by_name(self) -> dict[str, list[str]]:
        return {name: row for row in self.rows() for name in _CODE_SPAN.findall(row[0])}


@pytest.fixture(scope="module")
def contracts() -> dict[str, Section]:
    text = CONTRACTS.read_text(encoding="utf-8")
    headings = list(_HEADING.finditer(text))
    titles = [h.group(1).strip() for h in headings]
    assert len(titles) == len(set(titles)), f"section titles must be unique to be cited: {titles}"
    ends = [h.start() for h in headings[1:]] + [len(text)]
    return {h.group(1).strip(): Section(h.group(1).strip(), text[h.end():end]) for h, end in zip(headings, ends, strict=True)}


def _undocumented(in_code: set[str], documented: set[str]) -> str:
    return f"in the code but not in docs/contracts.md: {sorted(in_code - documented)}; documented but gone: {sorted(documented - in_code)}"


@pytest.mark.parametrize(
    ("shape", "section"),
    [
        (JobItem, "Job item"),
        (JobErrorDict, "Job error"),
        (OcrResult, "result.json"),
        (EngineInfo, "Engine"),
        (Page, "Page"),
        (Line, "Line"),
        (Word, "Word"),
        (Block, "Block"),
        (ResultWarning, "Warning"),
    ],
    ids=lambda value: value if isinstance(value, str) else value.__name__,
)
def test_every_typed_field_is_a_row_of_its_section(shape: type, section: str, contracts: dict[str, Section]) -> None:
    fields_in_code = set(shape.__annotations__) | (set(CHUNK_CLAIM_ATTRIBUTE_PATTERNS) if shape is JobItem else set())
    assert fields_in_code == contracts[section].names(), _undocumented(fields_in_code, contracts[section].names())


def test_the_job_message_fields_are_documented(contracts: dict[str, Section]) -> None:
    in_code = {f.name for f in dataclasses.fields(JobMessage)} | set(JobMessageBody.__annotations__)
    assert in_code == contracts["SQS job message"].names(), _undocumented(in_code, contracts["SQS job message"].names())


def test_every_attribute_the_job_store_writes_is_typed_and_documented(platform: Platform, contracts: dict[str, Section]) -> None:
    """Drive every JobStore write, including the ``if_not_exists`` paths, and read back what DynamoDB holds."""
    store = platform.store
    warning = engine_fallback_warning(requested="PP-StructureV3", ran="PP-OCRv5", reason="no weights")
    store.create(NewJob(
        "full", "pp-ocrv5", "https://example.com/a.pdf", "de", "1-2", {"dpi": 200}, file_name="a.pdf", owner="u-1",
        callback_url="https://hooks.example.com/ocr",
    ))
    assert store.claim_dispatch("full", "lambda", attempt_id="delivery-1", lease_seconds=60).acquired
    assert store.record_fetched_input("full", uri="s3://b/documents/full/a.pdf", url="https://example.com/a.pdf", file_name="a.pdf")
    assert store.mark_dispatched("full", attempt_id="delivery-1", output_location="s3://b/async/outputs/o.out", failure_location="s3://b/async/failures/o-error.out")
    assert store.claim_step("full", "run", attempt_id="run-1", lease_seconds=900).acquired
    assert store.claim_step("full", "finish", attempt_id="finish-1", lease_seconds=300).acquired
    assert store.release_claim("full", "finish", attempt_id="finish-1")
    assert store.record_page_count("full", 2, document_type="pdf") and store.add_pages_done("full")
    assert store.start_chunks("full", 2, attempt_id="run-1", chunk_pages=["1", "2"])
    assert store.claim_chunk_launch("full") == (0, 2, "1")
    assert store.claim_chunk("full", 1, attempt_id="chunk-1", lease_seconds=900).acquired
    assert store.mark_chunk_done("full", 1) == 1
    assert store.record_chunk_requests("full", [{"output_location": "s3://b/async/outputs/c.out", "failure_location": None}])
    assert store.mark_completed("full", result_uri="s3://b/results/full/result.json", page_count=2, warnings=[warning], result_pdf="s3://b/results/full/result.pdf",
                                pages_failed=[{"page": 2, "code": "corrupt_document", "message": "Page 2 cannot be rendered."}],

                                formats={"hocr": "s3://b/results/full/result.hocr"})
    assert store.claim_webhook("full", attempt_id="hook-1", lease_seconds=30)
    attempt: CallbackAttempt = {"attempt": 1, "at": "2026-11-24T05:00:00.000Z", "status_code": 200, "duration_ms": 12}
    assert store.record_callback_attempt("full", attempt, status="delivered", attempt_id="hook-1")
    assert store.mark_notified("full")
    unseen = NewJob("unseen", "paddleocr-vl", "s3://b/documents/unseen/a.png")
    assert store.mark_processing("unseen", "sagemaker", job=unseen)
    assert store.mark_failed("unregistered", JobError("invalid_message", "bad"), job=unseen)

    written = {re.sub(r"^chunk\d+_", "chunk<N>_", name) for item in store.table.scan()["Items"] for name in item}
    typed = set(JobItem.__annotations__) | set(CHUNK_CLAIM_ATTRIBUTE_PATTERNS)

    assert written == typed, _undocumented(written, typed)
    assert written == contracts["Job item"].names(), _undocumented(written, contracts["Job item"].names())


def test_the_state_machine_lists_every_status_and_conditional_write(contracts: dict[str, Section]) -> None:
    section = contracts["State machine"]
    assert {status.value for status in JobStatus} <= section.spans()
    writes = {  # JobStore's own and its parts' (lifecycle, claims, chunk state, delivery)
        name for name in dir(JobStore)
        if name == "create" or name.startswith(("mark_", "claim_", "release_", "record_", "add_", "start_"))
    }
    assert writes == section.names(), _undocumented(writes, section.names())


def test_result_documents_carry_exactly_the_typed_fields() -> None:
    page: Page = {"page": 1, "width": 10, "height": 10, "scale": 1.0, "lines": []}
    document = build_result("j", "pp-ocrv5", {"name": "e", "models": [], "version": "1"}, [page], {"predict": 0.1})
    assert set(document) | {"document_type"} == set(OcrResult.__annotations__) - {"pages_failed"}  # document_type: Office/HTML; pages_failed: when pages failed
    failed = [{"page": 2, "code": "corrupt_document", "message": "Page 2 cannot be rendered."}]
    document = build_result("j", "pp-ocrv5", {"name": "e", "models": [], "version": "1"}, [page], pages_failed=failed)  # type: ignore[list-item]
    assert set(document) | {"document_type"} == set(OcrResult.__annotations__)
    assert set(engine_fallback_warning(requested="a", ran="b", reason="c")) == set(ResultWarning.__annotations__)


def _timing_keys_in_code() -> set[str]:
    """Every key the package puts into a ``timings`` dict: literals, ``update(k=...)`` and ``[...] =``."""

    def is_timings(node: ast.AST) -> bool:
        return (
            (isinstance(node, ast.Name) and node.id == "timings")
            or (isinstance(node, ast.Attribute) and node.attr == "timings")
            or (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value == "timings")
        )

    keys: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            literal = None
            if isinstance(node, ast.keyword) and node.arg == "timings":
                literal = node.value
            elif isinstance(node, ast.Assign) and any(is_timings(t) for t in node.targets):
                literal = node.value
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "update" and is_timings(node.func.value):
                keys |= {kw.arg for kw in node.keywords if kw.arg}
            elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) and is_timings(node.value):
                if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
                    keys.add(node.slice.value)
            if isinstance(literal, ast.Dict):
                keys |= {k.value for k in literal.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    return keys


def test_every_timing_key_is_documented(contracts: dict[str, Section]) -> None:
    in_code = _timing_keys_in_code()
    assert {"predict", "ocr", "download", "total"} <= in_code  # the scan still finds what the code writes
    assert in_code == contracts["Timings"].names(), _undocumented(in_code, contracts["Timings"].names())


def test_every_engine_option_is_documented(contracts: dict[str, Section]) -> None:
    from ocr_platform.engines.options import KNOWN_OPTIONS

    assert set(KNOWN_OPTIONS) == contracts["Engine options"].names()


def test_every_error_code_is_documented(contracts: dict[str, Section]) -> None:
    in_code = {value for name, value in vars(ErrorCode).items() if name.isupper() and isinstance(value, str)}
    assert in_code == contracts["Error codes"].names(), _undocumented(in_code, contracts["Error codes"].names())


def test_every_bucket_prefix_is_documented(contracts: dict[str, Section]) -> None:
    in_code = {value for name, value in vars(s3_layout).items() if name.endswith("_PREFIX")}
    assert in_code == contracts["S3 layout"].names(), _undocumented(in_code, contracts["S3 layout"].names())


def test_the_routing_table_is_documented_with_its_backends(contracts: dict[str, Section]) -> None:
    rows = contracts["Model routing"].row_by_name()
    documented = {name: row[1].strip("`") for name, row in rows.items()}
    assert documented == {name: spec.backend for name, spec in MODEL_TABLE.items()}


def test_every_exit_status_is_documented(contracts: dict[str, Section]) -> None:
    rows = contracts["Exit statuses"].row_by_name()
    documented = {int(number): row[1].strip("`") for number, row in rows.items()}
    assert documented == {int(status): status.name for status in ExitStatus}


def _client_error_codes_in_code() -> dict[str, ExitStatus]:
    """``code -> exit status`` of every ``PlatformClientError(...)`` the package raises with a known code."""
    default = inspect.signature(PlatformClientError).parameters["exit_status"].default
    codes: dict[str, ExitStatus] = {code: ExitStatus.AWS_ACCESS for code in _ACCESS_CODES.values()}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "PlatformClientError"):
                continue
            code_arg = node.args[0] if node.args else None
            if isinstance(code_arg, ast.Constant) and isinstance(code_arg.value, str):
                code = code_arg.value
            elif isinstance(code_arg, ast.Attribute) and isinstance(code_arg.value, ast.Name) and code_arg.value.id == "ErrorCode":
                code = getattr(ErrorCode, code_arg.attr)
            else:
                continue  # a code passed through (a JobError's, an _ACCESS_CODES value)
            status_arg = node.args[2] if len(node.args) > 2 else next((k.value for k in node.keywords if k.arg == "exit_status"), None)
            codes[code] = ExitStatus[status_arg.attr] if isinstance(status_arg, ast.Attribute) else default
    return codes


def test_every_client_error_code_is_documented_with_its_exit_status(contracts: dict[str, Section]) -> None:
    in_code = _client_error_codes_in_code()
    assert {"no_platform", "job_not_found", "wait_timed_out", "access_denied"} <= set(in_code)  # the scan still works
    rows = contracts["Client error codes"].row_by_name()
    assert {code: int(rows[code][1]) for code in in_code if code in rows} == {code: int(s) for code, s in in_code.items()}, (
        f"undocumented client error codes: {sorted(set(in_code) - set(rows))}"
    )
    job_codes = {value for name, value in vars(ErrorCode).items() if name.isupper()}
    assert set(rows) - set(in_code) <= job_codes, f"documented but gone: {sorted(set(rows) - set(in_code) - job_codes)}"


def test_every_command_and_option_is_documented(contracts: dict[str, Section]) -> None:
    rows = [row[0] for row in contracts["Commands"].rows()]

    def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
        return next((a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction)), {})

    def requirements(parser: argparse.ArgumentParser, prefix: str) -> set[str]:
        """The words a row for ``prefix`` must show: its options, positional choices and subcommands."""
        needed = {option for action in parser._actions for option in action.option_strings if option.startswith("--")}
        needed.discard("--help")
        for action in parser._actions:
            if not action.option_strings and action.choices and not isinstance(action, argparse._SubParsersAction):
                needed |= {f"{prefix} {choice}" for choice in action.choices}
        for name, sub in subcommands(parser).items():
            needed |= {f"{prefix} {name}"} | requirements(sub, f"{prefix} {name}")
        return needed

    commands = subcommands(cli._parser())
    documented = {span.split()[0] for row in rows for span in _CODE_SPAN.findall(row)}
    assert documented == set(commands), _undocumented(set(commands), documented)
    for name, parser in commands.items():
        text = " ".join(row for row in rows if _CODE_SPAN.findall(row)[0].split()[0] == name)
        missing = {word for word in requirements(parser, name) if word not in text}
        assert not missing, f"docs/contracts.md, \"Commands\": the {name!r} row lacks {sorted(missing)}"


def test_every_local_stack_variable_is_documented(contracts: dict[str, Section]) -> None:
    placeholder = {"int": 1, "float": 0.0}
    info = StackInfo(**{
        f.name: placeholder.get(f.type if isinstance(f.type, str) else f.type.__name__, "x")
        for f in dataclasses.fields(StackInfo)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    })
    exported = {line.removeprefix("export ").split("=", 1)[0] for line in info.export_lines()}
    documented = contracts["Local stack environment"].names()
    assert exported == documented, _undocumented(exported, documented)


def test_citations_of_the_contracts_name_existing_sections(contracts: dict[str, Section]) -> None:
    citation = re.compile(r'docs/contracts\.md, "([^"]+)"')
    cited = {
        (path.relative_to(REPOSITORY).as_posix(), title)
        for root in (PACKAGE, REPOSITORY / "tests", REPOSITORY / "infra" / "ocr_infra")
        for path in root.rglob("*.py")
        for title in citation.findall(path.read_text(encoding="utf-8"))
    }
    assert {path for path, _ in cited} >= {"lambdas/ocr_platform/jobs/store.py", "lambdas/ocr_platform/jobs/messages.py"}
    assert not {(path, title) for path, title in cited if title not in contracts}

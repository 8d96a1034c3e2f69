"""Derive ``shapes.json`` (the shapes of real Amazon Textract responses) from the public test data of
aws-samples/amazon-textract-response-parser (Apache-2.0; the commit and files are listed in ``shapes.json``).

Run with the repository's git directory (a bare clone is enough):
    python tests/documents/textract/derive_shapes.py /path/to/amazon-textract-response-parser.git
It reads each response with ``git show`` and records, per block type, the keys every block has, the keys any block
has, each key's JSON types, the ``EntityTypes`` values and the relationship types seen; and the responses' top-level
keys. The responses themselves are not stored here (each is 50-260 kB)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

FILES = [
    "src-python/tests/data/gib__90_degrees.json", "src-python/tests/data/gib__180_degrees.json",
    "src-python/tests/data/gib__270_degrees.json", "src-python/tests/data/gib__10_degrees.json",
    "src-python/tests/data/little_women_page_1.json", "src-python/tests/data/employment-application.json",
    "src-python/tests/data/tables_with_headers_and_merged_cells.json", "src-python/tests/data/in-table-title.json",
    "src-python/tests/data/in-table-footer.json", "src-python/tests/data/all_features_with_floating_title_header.json",
    "src-python/tests/data/textract-new-tables-api.json", "src-js/test/data/test-multicol-response.json",
]


def main(git_dir: str) -> None:
    commit = subprocess.run(["git", "--git-dir", git_dir, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    every: dict[str, set[str]] = {}
    seen: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    entities: dict[str, set[str]] = defaultdict(set)
    relationships: dict[str, set[str]] = defaultdict(set)
    top: set[str] = set()
    for name in FILES:
        data: Any = json.loads(subprocess.run(["git", "--git-dir", git_dir, "show", f"{commit}:{name}"], capture_output=True, text=True, check=True).stdout)
        for response in data if isinstance(data, list) else [data]:
            top.update(response)
            for block in response["Blocks"]:
                kind = block["BlockType"]
                every[kind] = set(block) if kind not in every else every[kind] & set(block)
                for key, value in block.items():
                    seen[kind][key].add(type(value).__name__)
                entities[kind].update(block.get("EntityTypes", []))
                relationships[kind].update(r["Type"] for r in block.get("Relationships", []))
    shapes = {
        "source": {"repository": "https://github.com/aws-samples/amazon-textract-response-parser", "commit": commit,
                   "licence": "Apache-2.0", "files": FILES},
        "top_level_keys": sorted(top),
        "blocks": {kind: {"always": sorted(every[kind]), "keys": {k: sorted(v) for k, v in sorted(seen[kind].items())},
                          "entity_types": sorted(entities[kind]), "relationships": sorted(relationships[kind])}
                   for kind in sorted(seen)},
    }
    (Path(__file__).parent / "shapes.json").write_text(json.dumps(shapes, indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1])

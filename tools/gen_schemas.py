"""Write the JSON Schemas of the file formats into classifier/schemas/ (`make schemas`).

Each is generated from the pydantic model the loader validates that format
with (`classifier.cli.schema.SCHEMAS`); tests/source/test_schemas.py fails when the committed
files drift from the models.
"""

from __future__ import annotations

from classifier.cli.schema import FOLDER, SCHEMAS, file_name, generate


def main() -> None:
    FOLDER.mkdir(exist_ok=True)
    for stale in FOLDER.glob("*.schema.json"):
        if stale.name not in {file_name(n) for n in SCHEMAS}:
            stale.unlink()
    for name in SCHEMAS:
        (FOLDER / file_name(name)).write_text(generate(name), encoding="utf-8")
    print(f"generated {len(SCHEMAS)} schemas in classifier/schemas/")


if __name__ == "__main__":
    main()

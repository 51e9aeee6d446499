"""Shared base for every versioned JSON contract.

Each contract carries ``schema_version`` so that a reader can refuse a document written by an
incompatible producer with a clear message instead of mis-reading it.

Numbers are finite. JSON has no Infinity or NaN; Python's and pydantic's parsers accept them anyway (and
1e999 overflows to Infinity), and pydantic writes them back as ``null``, which a required number then
refuses: a probe value of Infinity used to be read, stored as null, and the report could not be read
again. So a document holding a non-finite number is refused when it is read, naming the field, and a
document is only written when it reads back.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar, Protocol, Self

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from rlinf_bench.errors import ContractError


class DocumentSource(Protocol):
    """Where stored documents are read from (:class:`rlinf_bench.document_store.Storage`: local paths and ``s3://``)."""

    def read_bytes(self, uri: str) -> bytes: ...


class Contract(BaseModel):
    """A pydantic model with a ``schema_version`` checked on load."""

    model_config = ConfigDict(extra="forbid", validate_assignment=False, populate_by_name=True)

    SCHEMA_VERSION: ClassVar[str] = "1.0"
    schema_version: str = "1.0"

    @field_validator("schema_version")
    @classmethod
    def _same_major_version(cls, value: str) -> str:
        expected_major = cls.SCHEMA_VERSION.split(".")[0]
        if value.split(".")[0] != expected_major:
            raise ValueError(
                f"schema_version {value!r} is not supported by this reader (expects {cls.SCHEMA_VERSION}); "
                "re-create the document with a matching rlinf-bench version"
            )
        return value

    @classmethod
    def from_json(cls, text: str | bytes, *, source: str = "<string>") -> Self:
        """Parse and validate JSON text; errors name ``source`` and every bad field (a non-finite number too)."""
        try:
            parsed = json.loads(text)
        except (ValueError, RecursionError):
            parsed = None  # not JSON (or absurdly deep): pydantic's own error below says so, naming the place
        _refuse_non_finite(cls.__name__, source, parsed)
        try:
            return cls.model_validate_json(text)
        except ValidationError as exc:
            raise ContractError(describe_validation_error(cls.__name__, source, exc)) from exc

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "<dict>") -> Self:
        """Validate an already-parsed object; errors name ``source`` and every bad field (a non-finite number too)."""
        _refuse_non_finite(cls.__name__, source, data)
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise ContractError(describe_validation_error(cls.__name__, source, exc)) from exc

    @classmethod
    def load(cls, path: str | Path) -> Self:
        """Read and validate a JSON file."""
        p = Path(path)
        try:
            text = p.read_bytes()
        except FileNotFoundError as exc:
            raise ContractError(f"{cls.__name__} file {p} does not exist; check the path") from exc
        return cls.from_json(text, source=str(p))

    @classmethod
    def read(cls, uri: str, *, storage: DocumentSource) -> Self:
        """Read and validate the JSON document at ``uri`` from ``storage``; errors name ``uri``.

        The storage's own error says when there is no document (:func:`rlinf_bench.documents.read_contract`
        turns that into a ContractError naming the contract).
        """
        return cls.from_json(storage.read_bytes(uri), source=uri)

    def to_json(self, *, indent: int | None = 2) -> str:
        """Serialize to JSON (the inverse of :meth:`from_json`).

        A non-finite number is written as ``null``. Where the field takes no null (a measurement, a
        required statistic) the document would not read back, so that raises ContractError naming the
        field instead; an optional one (a test statistic of a zero standard error) reads back as None.
        """
        text = self.model_dump_json(indent=indent)
        bad = list(non_finite_fields(self.model_dump(mode="python")))
        if bad:
            try:
                type(self).model_validate_json(text)
            except ValidationError as exc:
                fields = ", ".join(f"{path} = {_json_name(value)}" for path, value in bad)
                raise ContractError(
                    f"this {type(self).__name__} holds non-finite numbers ({fields}) that JSON cannot carry; "
                    f"it would not read back:\n" + describe_validation_error(type(self).__name__, "the document", exc)
                ) from exc
        return text

    def save(self, path: str | Path) -> Path:
        """Write JSON atomically (write a sibling temp file, then rename), so readers never see half a file."""
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(f".{p.name}.tmp")
        tmp.write_text(self.to_json())
        tmp.replace(p)
        return p


def non_finite_fields(data: Any, path: str = "") -> Iterator[tuple[str, float]]:
    """``(field path, value)`` of every NaN or infinite number in parsed JSON (or a model dump)."""
    if isinstance(data, float):
        if not math.isfinite(data):
            yield path or "(document)", data
    elif isinstance(data, dict):
        for key, value in data.items():
            yield from non_finite_fields(value, f"{path}.{key}" if path else str(key))
    elif isinstance(data, list | tuple):
        for i, value in enumerate(data):
            yield from non_finite_fields(value, f"{path}.{i}" if path else str(i))


def _json_name(value: float) -> str:
    return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")


def _refuse_non_finite(model: str, source: str, data: Any) -> None:
    bad = list(non_finite_fields(data))
    if bad:
        lines = [f"{source} is not a valid {model}:"]
        lines += [
            f"  - field {path}: {_json_name(value)} is not a finite number (JSON has no Infinity or NaN); "
            "the producer must write a finite value (or null where the field allows it)"
            for path, value in bad
        ]
        raise ContractError("\n".join(lines))


def describe_validation_error(model: str, source: str, exc: ValidationError) -> str:
    """Turn a pydantic error into one line per bad field, naming the document and the field path."""
    lines = [f"{source} is not a valid {model}:"]
    for err in exc.errors():
        loc = ".".join(str(part) for part in err["loc"]) or "(document)"
        lines.append(f"  - field {loc}: {err['msg']}")
    return "\n".join(lines)


def json_schema_of(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON Schema of a contract, as written to docs/schemas/."""
    schema = model.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


def dumps_schema(model: type[BaseModel]) -> str:
    return json.dumps(json_schema_of(model), indent=2, sort_keys=True) + "\n"

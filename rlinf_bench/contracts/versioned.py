"""Shared base for every versioned JSON contract.

Each contract carries ``schema_version`` so that a reader can refuse a document written by an
incompatible producer with a clear message instead of mis-reading it.
"""

from __future__ import annotations

import json
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
        """Parse and validate JSON text; errors name ``source`` and every bad field."""
        try:
            return cls.model_validate_json(text)
        except ValidationError as exc:
            raise ContractError(describe_validation_error(cls.__name__, source, exc)) from exc

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "<dict>") -> Self:
        """Validate an already-parsed object; errors name ``source`` and every bad field."""
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
        """Serialize to JSON (the inverse of :meth:`from_json`)."""
        return self.model_dump_json(indent=indent)

    def save(self, path: str | Path) -> Path:
        """Write JSON atomically (write a sibling temp file, then rename), so readers never see half a file."""
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(f".{p.name}.tmp")
        tmp.write_text(self.to_json())
        tmp.replace(p)
        return p


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

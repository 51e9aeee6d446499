"""Wire format of the policy-server protocol (docs/policies.md is the normative description).

Messages are msgpack maps with string keys. A numpy array travels as a map
``{"__ndarray__": true, "data": <bin: C-order bytes>, "dtype": <numpy dtype str, e.g. "<f4", "|u1">,
"shape": [d0, d1, ...]}`` and a numpy scalar as ``{"__npgeneric__": true, "data": <value>, "dtype": <str>}``:
the same extension openpi's client uses, so openpi-style tooling can read our frames and a server in
any language with a msgpack library can implement the protocol.
"""

from __future__ import annotations

import json
from typing import Any

import msgpack
import numpy as np

PROTOCOL = "rlinf-bench-policy"
PROTOCOL_VERSION = 1
#: key a client adds to a request to announce episodes that start with this batch
RESET_KEY = "reset_episode_ids"
HEALTH_PATH = "/healthz"


class WireError(ValueError):
    """A frame that is not valid msgpack or uses the numpy extension wrongly."""


def _encode(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind in "OV":
            raise TypeError(f"cannot send numpy arrays of dtype {obj.dtype} (object/void); use numeric or bool arrays")
        array = np.ascontiguousarray(obj)
        return {"__ndarray__": True, "data": array.tobytes(), "dtype": array.dtype.str, "shape": list(array.shape)}
    if isinstance(obj, np.generic):
        return {"__npgeneric__": True, "data": obj.item(), "dtype": obj.dtype.str}
    if isinstance(obj, tuple):
        return list(obj)
    raise TypeError(
        f"cannot send a {type(obj).__name__} in a policy message (allowed: numbers, str, bytes, lists, dicts, numpy)"
    )


def _decode(obj: dict[str, Any]) -> Any:
    if obj.get("__ndarray__") is True:
        try:
            dtype = np.dtype(obj["dtype"])
            shape = tuple(int(d) for d in obj["shape"])
            if dtype.kind in "OV":
                raise WireError(f"ndarray dtype {dtype} is not allowed")
            # Copy so receivers get a writable array they own (frombuffer views are read-only).
            return np.frombuffer(obj["data"], dtype=dtype).reshape(shape).copy()
        except (KeyError, TypeError, ValueError) as exc:
            raise WireError(f"malformed __ndarray__ entry: {exc}") from exc
    if obj.get("__npgeneric__") is True:
        try:
            return np.dtype(obj["dtype"]).type(obj["data"])
        except (KeyError, TypeError, ValueError) as exc:
            raise WireError(f"malformed __npgeneric__ entry: {exc}") from exc
    return obj


def pack(message: Any) -> bytes:
    """Encode a message (dicts, lists, numbers, strings, numpy arrays/scalars) to msgpack bytes."""
    return msgpack.packb(message, default=_encode, use_bin_type=True)


def unpack(frame: bytes | str) -> Any:
    """Decode msgpack bytes; text frames and garbage raise WireError."""
    if isinstance(frame, str):
        raise WireError("expected a binary msgpack frame, got a text frame")
    try:
        return msgpack.unpackb(frame, object_hook=_decode, raw=False, strict_map_key=True)
    except WireError:
        raise
    except Exception as exc:  # msgpack raises ExtraData, FormatError, StackError, ValueError...
        raise WireError(f"frame is not valid msgpack ({type(exc).__name__}: {exc})") from exc


def jsonable(value: Any) -> Any:
    """Make a describe() dict safe to send (Paths, enums, numpy scalars become strings or numbers)."""
    return json.loads(json.dumps(value, default=str))

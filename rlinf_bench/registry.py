"""One registry of named things (suites, protocols, baselines, RoboTwin tasks, policy schemes...).

``Registry[T](kind)`` maps names to entries: ``register`` adds them (as a decorator or with a value),
``get`` returns one, ``names`` lists them. A miss raises one error type, :class:`UnknownNameError`
(or the subclass the registry was given, e.g. :class:`UnknownSuiteError`), whose message lists the
valid names and suggests the closest one::

    unknown suite 'libero_gaol'; valid: libero_spatial, libero_object, ... Did you mean 'libero_goal'?
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Iterator
from typing import Generic, TypeVar, overload

from rlinf_bench.errors import UnknownNameError

__all__ = ["Registry", "closest", "unknown_name"]

T = TypeVar("T")
_MISSING = object()


def closest(name: str, valid: Iterable[str]) -> str | None:
    """The valid name closest to ``name`` (difflib's ratio of at least 0.6), or None."""
    close = difflib.get_close_matches(name, list(valid), n=1)
    return close[0] if close else None


def unknown_name(
    kind: str,
    name: str,
    valid: Iterable[str],
    *,
    error: type[UnknownNameError] = UnknownNameError,
    context: str = "",
    also: str = "",
) -> UnknownNameError:
    """The error for a ``kind`` called ``name`` that is not among ``valid`` (a registry's miss, or a lookup by hand).

    ``context`` says where the name came from (``in 'builtin:rando'``); ``also`` is appended to the list of
    valid names (``, or robotwin/<task> for one of the runtime's 50 tasks``).
    """
    names = tuple(valid)
    suggestion = closest(name, names)
    where = f" in {context!r}" if context else ""
    hint = f" Did you mean {suggestion!r}?" if suggestion else ""
    message = f"unknown {kind} {name!r}{where}; valid: {', '.join(names) or '(none)'}{also}.{hint}"
    return error(message, kind=kind, name=name, valid=names, suggestion=suggestion)


class Registry(Generic[T]):
    """Named entries of one ``kind``; registering a name twice raises, a miss says "did you mean".

    ``error`` is the :class:`UnknownNameError` subclass a miss raises; ``sort`` lists names sorted instead
    of in registration order; ``also`` extends the list of valid names in the error (see :func:`unknown_name`).
    """

    def __init__(
        self, kind: str, *, error: type[UnknownNameError] = UnknownNameError, sort: bool = False, also: str = ""
    ) -> None:
        self.kind = kind
        self.error = error
        self.sort = sort
        self.also = also
        self._entries: dict[str, T] = {}

    @overload
    def register(self, name: str, /, *names: str) -> Callable[[T], T]: ...
    @overload
    def register(self, name: str, /, *, value: T) -> T: ...
    def register(self, name: str, /, *names: str, value: object = _MISSING) -> object:
        """Register under ``name`` (and aliases): ``@reg.register("a", "b")`` or ``reg.register("a", value=x)``."""

        def decorate(obj: T) -> T:
            for each in (name, *names):
                if each in self._entries:
                    raise ValueError(f"{self.kind} {each!r} is already registered")
                self._entries[each] = obj
            return obj

        if value is _MISSING:
            return decorate
        return decorate(value)  # type: ignore[arg-type]

    def get(self, name: str, *, context: str = "") -> T:
        """The entry called ``name``; a miss raises the registry's error listing the valid names."""
        try:
            return self._entries[name]
        except KeyError:
            pass
        raise unknown_name(self.kind, name, self.names(), error=self.error, context=context, also=self.also)

    def find(self, name: str) -> T | None:
        """The entry called ``name``, or None (for callers to whom an unknown name is no error)."""
        return self._entries.get(name)

    def names(self) -> list[str]:
        """Every registered name (sorted when the registry was made with ``sort=True``)."""
        return sorted(self._entries) if self.sort else list(self._entries)

    def values(self) -> list[T]:
        return [self._entries[n] for n in self.names()]

    def items(self) -> list[tuple[str, T]]:
        return [(n, self._entries[n]) for n in self.names()]

    def __getitem__(self, name: str) -> T:
        return self.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self._entries)

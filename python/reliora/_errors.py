"""The exceptions of ``reliora``: one class per SPEC §9 error code, all under :class:`Error`."""

from __future__ import annotations

__all__ = [
    "Error",
    "InvalidInput",
    "EmptyQuery",
    "InvalidMinScore",
    "InvalidLimit",
    "InvalidCandidates",
    "InvalidTokenBudget",
    "InvalidProjectContext",
    "InvalidTag",
    "UnknownProfile",
    "InvalidRecord",
    "InvalidOption",
    "NotFound",
    "IndexDamaged",
    "IoError",
    "from_code",
]


class Error(Exception):
    """Every error Reliora raises. ``code`` is the SPEC §9 code (``"invalid_limit"``, …),
    the same the command line prints as ``{"error": CODE, "message": …}``; ``message`` is its
    message, word for word."""

    code: str = "error"

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code


class InvalidInput(Error, ValueError):
    """A bad query, option or record (the command line's exit status 2)."""

    code = "invalid_option"


class EmptyQuery(InvalidInput):
    """The query has no tokens and no filter was given (``empty_query``)."""

    code = "empty_query"


class InvalidMinScore(InvalidInput):
    """``min_score`` is NaN, infinite, negative or above 100 (``invalid_min_score``)."""

    code = "invalid_min_score"


class InvalidLimit(InvalidInput):
    """``limit`` is below 1 (``invalid_limit``)."""

    code = "invalid_limit"


class InvalidCandidates(InvalidInput):
    """``candidates`` is below 1 (``invalid_candidates``)."""

    code = "invalid_candidates"


class InvalidTokenBudget(InvalidInput):
    """``token_budget`` is below 1 (``invalid_token_budget``)."""

    code = "invalid_token_budget"


class InvalidProjectContext(InvalidInput):
    """``project_context`` has no searchable tokens (``invalid_project_context``)."""

    code = "invalid_project_context"


class InvalidTag(InvalidInput):
    """A tag without words, or too many tags (``invalid_tag``)."""

    code = "invalid_tag"


class UnknownProfile(InvalidInput):
    """``profile`` names no profile (``unknown_profile``)."""

    code = "unknown_profile"


class InvalidRecord(InvalidInput):
    """A record failed validation, or its JSON is malformed (``invalid_record``)."""

    code = "invalid_record"


class InvalidOption(InvalidInput):
    """An unknown option, an unparsable value, or another bad option (``invalid_option``)."""

    code = "invalid_option"


class NotFound(Error, LookupError):
    """An unknown id or locator (``not_found``)."""

    code = "not_found"


class IndexDamaged(Error):
    """The index is damaged, missing or foreign (``index_damaged``); see ``reliora salvage``."""

    code = "index_damaged"


class IoError(Error):
    """An I/O failure (``io_error``)."""

    code = "io_error"


_BY_CODE: dict[str, type[Error]] = {
    cls.code: cls
    for cls in (
        EmptyQuery,
        InvalidMinScore,
        InvalidLimit,
        InvalidCandidates,
        InvalidTokenBudget,
        InvalidProjectContext,
        InvalidTag,
        UnknownProfile,
        InvalidRecord,
        InvalidOption,
        NotFound,
        IndexDamaged,
        IoError,
    )
}


def from_code(code: str, message: str) -> Error:
    """The exception for a SPEC error code (the native module raises what this returns); an
    unknown code gives a plain :class:`Error` carrying it."""
    return _BY_CODE.get(code, Error)(message, code)

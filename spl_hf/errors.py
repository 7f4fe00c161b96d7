"""The one base class for bad input, which the CLI turns into a one-line message.

Every failure caused by what a user gave (a file, a row, a setting, an output path, a rule base, a
model that cannot serve the job) raises a subclass of :class:`SplHfError`; the message names the
file, row or field. ``spl-hf`` prints such errors (and ``OSError``/decode errors) as one line with
exit 2. Any other exception is a bug: it keeps its traceback and exits 1.

``SplHfError`` subclasses ``ValueError`` so that library callers that already catch ``ValueError``
for bad input keep working.
"""

from __future__ import annotations


class SplHfError(ValueError):
    """Bad input: the message names the file, row or field and says what is wrong."""


class OutputError(SplHfError):
    """An output path that spl_hf refuses to write; the message names the path and why."""


class UnknownNameError(SplHfError, KeyError):
    """A name (tenet, attribute, instruction, verdict, run) that the given input does not define.

    Also a ``KeyError``, so that lookups keep the mapping protocol; printed without ``KeyError``'s quotes.
    """

    def __str__(self) -> str:
        return str(self.args[0]) if len(self.args) == 1 else super().__str__()


# Failures caused by what the user gave (files, arguments, the machine's file system), not by a bug:
# every entry point (spl-hf, train.py, publish's audit) prints these as one line and exits 2.
# Anything else (a plain ValueError, KeyError, TypeError, ...) is a bug: traceback, exit 1.
USER_ERRORS: tuple[type[BaseException], ...] = (
    SplHfError,  # bad input: the message names the file, row or field (OutputError, RuleBaseError, ...)
    OSError,  # FileNotFoundError, PermissionError, IsADirectoryError, FileExistsError, gzip.BadGzipFile
    UnicodeDecodeError,  # a text input that is not UTF-8
    EOFError,  # a truncated compressed file (gzip, bz2, lzma end early)
)


def did_you_mean(name: str, known: list[str] | tuple[str, ...]) -> str:
    """``" (did you mean 'x'?)"`` for the closest known name to a misspelt one, or ``""``."""
    import difflib

    close = difflib.get_close_matches(str(name), [str(k) for k in known], n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""

"""The exceptions digest raises.

Every error the library raises on purpose is a ``DigestError``; the CLI turns it
into a one-line message on stderr and the exit code in ``exit_code``::

    DigestError                 exit 1   base class; never raised bare
    ├── ConfigError             exit 2   bad flag value, config file or environment
    │   └── ConfigDeferred      exit 75  the same met by a mail hook (`digest ingest`): the
    │                                    mail waits in the queue until the setting is fixed
    ├── SourceError             exit 1   a listing that cannot be read or parsed
    │   │                                (names the source, and the line when known)
    │   ├── SourceUnavailable   exit 75  its server is down or too slow now: a run that read
    │   │                                nothing else can succeed later
    │   └── RecordsCut          exit 1   a source past a [limits] record cap: the records
    │                                    kept, the rest counted (an error only with --strict)
    ├── StateError              exit 1   the SQLite store is unreadable or from a newer digest
    │   ├── StateBusy           exit 75  another run holds the store's lock: try again later
    │   └── StateUnavailable    exit 75  the store's disk is full, read-only or failing: retry
    ├── TemplateError           exit 1   a prompt or issue template is missing or broken
    ├── LLMError                exit 1   the LLM endpoint refused the request for good
    │   └── LLMUnavailable      exit 75  the endpoint is down or rate-limited: try again later
    ├── MailError               exit 1   the SMTP server refused the message for good
    │   └── MailUnavailable     exit 75  the SMTP server is down or deferred it: try again later
    └── OutputUnavailable       exit 75  standard output could not take the whole product (a
                                         full disk, a closed pipe): try again later

Messages say what went wrong and how to fix it. Secrets never appear in them. A library
message names the *setting* to change (``setting="timeout"``), never a command-line flag: the
CLI adds the flag, the config key and the environment variable that set it.
"""

from __future__ import annotations

EX_OK = 0
EX_ERROR = 1
EX_USAGE = 2
EX_TEMPFAIL = 75


class DigestError(Exception):
    """Base class of every error digest raises on purpose.

    ``setting``: the setting whose value the user should change, if one is to blame.
    """

    exit_code = EX_ERROR
    setting: str | None = None

    def __init__(self, *args: object, setting: str | None = None) -> None:
        super().__init__(*args)
        if setting is not None:
            self.setting = setting


class ConfigError(DigestError):
    """A flag, environment variable or config file value is wrong."""

    exit_code = EX_USAGE


class ConfigDeferred(ConfigError):
    """A wrong setting met by ``digest ingest``: exit 75, so that the mail system keeps the
    listing mail and retries it once the setting is fixed, instead of bouncing it."""

    exit_code = EX_TEMPFAIL


class SourceError(DigestError):
    """A source could not be read or parsed."""

    def __init__(self, source: str, problem: str, *, line: int | None = None, fix: str = ""):
        self.source = source
        self.line = line
        self.problem = problem
        self.fix = fix
        where = f"{source}:{line}" if line is not None else source
        message = f"{where}: {problem}"
        if fix:
            message += f" ({fix})"
        super().__init__(message)


class SourceUnavailable(SourceError):
    """A source could not be fetched now (its server down, too slow, answering 5xx): a run
    that read nothing else can succeed later (exit 75)."""

    exit_code = EX_TEMPFAIL


class RecordsCut(SourceError):
    """A source gave more records than a ``[limits]`` cap allows: those within it are kept,
    the rest counted in this error (in the run report's ``errors``; raised with --strict)."""


class StateError(DigestError):
    """The state store cannot be used. ``reason``: what went wrong without the advice the
    message ends with (``state.store_fault`` sets it), for a caller whose advice differs."""

    reason: str | None = None

    def __init__(self, *args: object, setting: str | None = None,
                 reason: str | None = None) -> None:
        super().__init__(*args, setting=setting)
        if reason is not None:
            self.reason = reason


class StateBusy(StateError):
    """Another process kept the state store locked past the wait: retry later."""

    exit_code = EX_TEMPFAIL


class StateUnavailable(StateError):
    """The store's disk is full, read-only or failing: may pass, so retry later."""

    exit_code = EX_TEMPFAIL


class TemplateError(DigestError):
    """A prompt or issue template is missing or fails to render."""


class LLMError(DigestError):
    """The LLM endpoint rejected a request in a way retrying will not fix."""


class LLMUnavailable(LLMError):
    """The LLM endpoint is unreachable, overloaded or rate-limited for now."""

    exit_code = EX_TEMPFAIL


class MailError(DigestError):
    """The SMTP server refused the message, the login or every recipient, for good."""


class MailUnavailable(MailError):
    """The SMTP server is unreachable or answered 4xx: the mail system should retry later."""

    exit_code = EX_TEMPFAIL


class OutputUnavailable(DigestError):
    """Standard output could not take the whole product (``--eml``, ``summarize``): retry."""

    exit_code = EX_TEMPFAIL

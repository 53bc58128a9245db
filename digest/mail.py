"""Deliver an issue by e-mail: one MIME message (multipart/alternative: text + HTML).

``build_message`` makes the message from the issue's plain-text and HTML renderings;
``send`` hands it to an SMTP server. Everything in the headers is ours (the week,
the configured addresses): no title, abstract or model output goes into a header.
SMTP failures are sorted the way mail systems sort them: a 4xx answer, a refused
connection or a time-out is temporary (``MailUnavailable``, exit 75: try again
later); a 5xx answer or a failed login is final (``MailError``, exit 1). A recipient
turned away at RCPT while others were taken is sorted the same way, but only after the
message went to the others: ``send`` returns that error in ``Delivered.refusal`` so the
caller can first record who got it.
The login goes as UTF-8 (RFC 4616), where ``smtplib`` takes only ASCII; the password is
only ever handed to the SMTP session; it is in no message or log line.
"""

from __future__ import annotations

import base64
import contextlib
import email.policy
import hmac
import ipaddress
import logging
import re
import smtplib
import ssl
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from email.errors import HeaderParseError
from email.headerregistry import Address
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from typing import TYPE_CHECKING, Any

from .errors import ConfigError, MailError, MailUnavailable
from .models import Issue
from .textsafety import clean_untrusted, ellipsize
from .weeks import date_range

if TYPE_CHECKING:
    from .settings import Settings

logger = logging.getLogger("digest.mail")

DEFAULT_TIMEOUT_S = 30.0
_LAST_PORT = 65535
_HOST_LABELS = re.compile(r"[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\.?")
_LOGINS = ("CRAM-MD5", "PLAIN", "LOGIN")  # the AUTH methods smtplib.SMTP.login can do
_ENHANCED_STATUS = re.compile(r"[245]\.\d{1,3}\.\d{1,3} ")  # RFC 3463: "5.7.1 "
_ANSWER_LIMIT = 400  # characters of a server's answer shown: Gmail's three lines fit
_MAX_CHALLENGES = 5  # as smtplib's: a server asking more is looping
# Controls, format characters (bidi, zero-width), line and paragraph separators, and what
# is no character: a header cannot hold them, or the address would not read as it is. Space
# separators ("山田\u3000太郎", a no-break space) are text.
_INVISIBLE = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


@dataclass(frozen=True)
class MailSettings:
    """Where and how to send. ``password`` is excluded from ``repr`` so it cannot leak."""

    sender: str
    recipients: tuple[str, ...]
    host: str | None = None
    port: int = 587
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    starttls: bool = True
    timeout_s: float = DEFAULT_TIMEOUT_S


def mail_settings(settings: Settings, *, sending: bool = True) -> MailSettings:
    """Where and how to send, from the run's resolved settings (``mail_from``, ``mail_to``,
    ``smtp_*``: flags, then DIGEST_MAIL_* / DIGEST_SMTP_* variables); addresses, the host
    name and the port are checked here, before any work, and a server is required when
    ``sending`` (not for a message only written out)."""
    sender = settings["mail_from"]
    recipients = _split_addresses(settings["mail_to"] or "")
    if not sender:
        raise ConfigError("no sender address", setting="mail_from")
    if not recipients:
        raise ConfigError("no recipient address", setting="mail_to")
    sender = _checked_address(sender, "mail_from")
    recipients = tuple(_checked_address(address, "mail_to") for address in recipients)
    reached: dict[str, str] = {}  # one copy a mailbox, as written first
    for address in recipients:
        reached.setdefault(mailbox(address), address)
    recipients = tuple(reached.values())
    host = settings["smtp_host"] or None
    if host is None and sending:
        raise _no_server()
    if host is not None:
        _check_host(host)
    return MailSettings(
        sender=sender, recipients=recipients, host=host,
        port=_port(settings["smtp_port"]), user=settings["smtp_user"] or None,
        password=settings["smtp_password"] or None,
        starttls=_on_or_off(settings["smtp_starttls"], "smtp_starttls"))


@dataclass(frozen=True)
class Delivered:
    """What the server took: its answer to the message and the recipients it accepted;
    ``refusal`` says whom it deferred or refused (None: it took them all)."""

    answer: str
    accepted: tuple[str, ...]
    refusal: MailError | None = None


def subject_for(issue: Issue) -> str:
    return f"Research digest, {issue.week} ({date_range(issue.start, issue.end)})"


def build_message(issue: Issue, *, text: str, html: str, settings: MailSettings) -> EmailMessage:
    """The issue as one message: the text part first, the HTML part preferred by mail readers."""
    message = EmailMessage(policy=email.policy.SMTP)
    message["Subject"] = subject_for(issue)
    message["From"] = settings.sender
    message["To"] = ", ".join(settings.recipients)
    message["Date"] = formatdate(localtime=False, usegmt=True)
    message["Message-ID"] = make_msgid(f"digest.{issue.week}", _domain(settings.sender))
    message["Auto-Submitted"] = "auto-generated"  # RFC 3834: no auto-replies to a newsletter
    message.set_content(text, subtype="plain", charset="utf-8", cte="quoted-printable")
    message.add_alternative(html, subtype="html", charset="utf-8", cte="quoted-printable")
    return message


def as_eml(message: EmailMessage) -> bytes:
    """The message for a ``sendmail -t``-style pipe: headers included, LF line endings."""
    return message.as_bytes(policy=email.policy.default)


def send(message: EmailMessage, settings: MailSettings,
         recipients: tuple[str, ...] | None = None) -> Delivered:
    """Hand the message to the SMTP server for ``recipients`` (default: all of the settings')
    and return what it took, or raise MailUnavailable (temporary: exit 75) / MailError
    (configuration or refusal: 1) when it took nothing."""
    envelope = settings.recipients if recipients is None else recipients
    if not settings.host:
        raise _no_server()
    _check_host(settings.host)
    _check_login_text(settings)
    where = f"{settings.host}:{settings.port}"
    try:
        with _AnsweringSMTP(settings.host, settings.port, timeout=settings.timeout_s) as smtp:
            _open_session(smtp, settings)
            specs = {_addr_spec(rcpt): rcpt for rcpt in envelope}
            refused = smtp.send_message(message, _addr_spec(settings.sender), list(specs))
            refused = {specs.get(spec, spec): answer for spec, answer in refused.items()}
            answer = smtp.last_answer
    except smtplib.SMTPAuthenticationError as error:
        if 400 <= error.smtp_code < 500:
            raise MailUnavailable(f"SMTP server {where} could not check the login now "
                                  f"({error.smtp_code}); try again later") from None
        raise MailError(f"SMTP server {where} refused the login ({error.smtp_code}); check "
                        "DIGEST_SMTP_USER and DIGEST_SMTP_PASSWORD") from None
    except smtplib.SMTPNotSupportedError as error:  # a command the server lacks: final
        raise MailError(f"SMTP server {where} does not support what sending needs "
                        f"({_text(str(error))})") from None
    except smtplib.SMTPRecipientsRefused as error:
        raise _refused(where, {_named(rcpt, envelope): answer
                               for rcpt, answer in error.recipients.items()}) from None
    except smtplib.SMTPResponseException as error:
        raise _by_code(where, error.smtp_code, _text(error.smtp_error)) from None
    except ssl.SSLCertVerificationError as error:
        raise MailError(f"SMTP server {where}: its TLS certificate is not trusted "
                        f"({error.verify_message}); fix the certificate or the server's name",
                        setting="smtp_host") from None
    except (OSError, smtplib.SMTPException) as error:  # refused, reset, time-out, disconnected
        raise MailUnavailable(f"SMTP server {where} is unavailable ({type(error).__name__}: "
                              f"{_text(str(error))}); try again later") from None
    accepted = tuple(rcpt for rcpt in envelope if rcpt not in refused)
    logger.info("sent %s to %d recipient(s) via %s", message["Subject"], len(accepted), where)
    return Delivered(answer, accepted, _refused(where, refused, accepted) if refused else None)


class _AnsweringSMTP(smtplib.SMTP):
    """smtplib.SMTP that keeps the server's answer to the message (``sendmail`` drops it)."""

    last_answer = ""

    def data(self, msg: Any) -> tuple[int, bytes]:
        code, text = super().data(msg)
        self.last_answer = f"{code} {_text(text)}"
        return code, text

    def __exit__(self, *exc_info: Any) -> None:
        """Once the server took the message it is out: a failed QUIT is no failed sending
        (raising would have the retry send it twice)."""
        try:
            super().__exit__(*exc_info)
        except (OSError, smtplib.SMTPException):
            if not self.last_answer.startswith("2"):
                raise

    def auth(self, mechanism: str, authobject: Any, *,
             initial_response_ok: bool = True) -> tuple[int, bytes]:
        """smtplib's AUTH exchange with the login sent as UTF-8, not ASCII (RFC 4616 for
        PLAIN; servers take LOGIN's alike): a password like "Pässwörd" raised
        UnicodeEncodeError. A variable's bytes that are no UTF-8 go as they were set."""
        initial = authobject() if initial_response_ok else None
        if initial is None:
            code, answer = self.docmd("AUTH", mechanism)
        else:
            code, answer = self.docmd("AUTH", f"{mechanism} {_base64(initial)}")
        self._auth_challenge_count = 0 if initial is None else 1  # smtplib's auth_login reads it
        while code == 334 and self._auth_challenge_count <= _MAX_CHALLENGES:
            self._auth_challenge_count += 1
            code, answer = self.docmd(_base64(authobject(base64.decodebytes(answer))))
        if code in (235, 503):  # logged in (503: already)
            return code, answer
        raise smtplib.SMTPAuthenticationError(code, answer)

    def auth_cram_md5(self, challenge: Any = None) -> Any:
        """smtplib's, with the password as UTF-8 (it took only ASCII)."""
        if challenge is None:
            return None
        return f"{self.user} {hmac.HMAC(_utf8(self.password), challenge, 'md5').hexdigest()}"


def _open_session(smtp: smtplib.SMTP, settings: MailSettings) -> None:
    smtp.ehlo()
    if settings.starttls:
        if not smtp.has_extn("starttls"):
            raise MailError(f"SMTP server {settings.host} does not offer STARTTLS; set "
                            "DIGEST_SMTP_STARTTLS=0 only for a server on a trusted network")
        smtp.starttls(context=ssl.create_default_context())
        smtp.ehlo()
    if settings.user:
        _login(smtp, settings)


def _login(smtp: smtplib.SMTP, settings: MailSettings) -> None:
    """Log in with a method smtplib can do: a server offering none (no AUTH, or only GSSAPI
    or NTLM) is a configuration to fix (exit 1), not a server to retry."""
    where = f"{settings.host}:{settings.port}"
    if not smtp.has_extn("auth"):
        raise MailError(f"SMTP server {where} offers no login (AUTH) but DIGEST_SMTP_USER is "
                        "set: unset DIGEST_SMTP_USER for a server that needs none, or use the "
                        "submission server that does (usually port 587)")
    offered = smtp.esmtp_features["auth"].split()
    if not set(offered) & set(_LOGINS):
        raise MailError(f"SMTP server {where} offers only logins digest cannot do (AUTH "
                        f"{_text(' '.join(offered))}; digest does {', '.join(_LOGINS)}): "
                        "enable one of those on the server, or use a submission server "
                        "that offers one (usually port 587)")
    smtp.login(settings.user or "", settings.password or "")


def _check_login_text(settings: MailSettings) -> None:
    """A user or password holding a lone surrogate (a Python caller's) is no text any server
    can be sent: a setting to fix, not a UnicodeEncodeError in the middle of the login."""
    for setting, value in (("smtp_user", settings.user), ("smtp_password", settings.password)):
        try:
            _utf8(value or "")
        except UnicodeEncodeError as error:
            raise ConfigError(f"{setting} holds a character that is no text (a lone surrogate "
                              f"at position {error.start + 1}); set it again",
                              setting=setting) from None


def _utf8(text: str) -> bytes:
    """``text`` as UTF-8; the bytes of an environment variable that were no UTF-8 (held as
    surrogate escapes) as they were set."""
    return text.encode("utf-8", "surrogateescape")


def _base64(text: str) -> str:
    return base64.b64encode(_utf8(text)).decode("ascii")


def _refused(where: str, refused: Mapping[str, tuple[int, bytes]],
             accepted: tuple[str, ...] = ()) -> MailError:
    """Recipients turned away at RCPT: temporary if any was deferred (4xx), as a retry can
    reach them; final if every one was refused (5xx)."""
    details = "; ".join(f"{rcpt}: {code} {_text(text)}" for rcpt, (code, text) in
                        refused.items())
    deferred = [400 <= code < 500 for code, _ in refused.values()]
    verb = "deferred" if all(deferred) else "deferred or refused" if any(deferred) else "refused"
    whom = (f"took the message for {', '.join(accepted)} but {verb} the others" if accepted
            else f"{verb} every recipient")
    if any(deferred):
        return MailUnavailable(f"SMTP server {where} {whom} ({details}); try again later")
    return MailError(f"SMTP server {where} {whom} ({details}); check the addresses",
                     setting="mail_to")


def _by_code(where: str, code: int, text: str) -> MailError:
    if 400 <= code < 500:
        return MailUnavailable(f"SMTP server {where} answered {code} {text}; try again later")
    return MailError(f"SMTP server {where} answered {code} {text}")


def _text(raw: bytes | str) -> str:
    """A server's answer (or words) on one line, as every error is: its lines joined, an
    enhanced status code each line repeats ("5.7.1") kept once, controls and bidi or
    zero-width characters dropped (a terminal would run "\\x1b]0;…"), the length bounded."""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    lines = text.splitlines() or [""]
    status = _ENHANCED_STATUS.match(lines[0])
    if status:
        lines[1:] = [line.removeprefix(status.group()) for line in lines[1:]]
    return ellipsize(clean_untrusted(" ".join(lines)), _ANSWER_LIMIT)


def _no_server() -> ConfigError:
    return ConfigError("no SMTP server to send through (or write the message out as .eml "
                       "instead)", setting="smtp_host")


def _check_host(host: str) -> None:
    """A name no server can have (an empty label, a space, a port after ':') is a setting to
    fix (exit 2), not a server to retry (75) nor a traceback (the idna codec's UnicodeError)."""
    try:
        ipaddress.ip_address(host)
        return
    except ValueError:
        pass
    try:
        name = host.encode("idna").decode("ascii")
    except UnicodeError as error:
        problem = str(error)
    else:
        if _HOST_LABELS.fullmatch(name):
            return
        problem = "a host name has only letters, digits, '-' and dots"
    raise ConfigError(f"smtp_host = {host!r} is not a host name or IP address ({problem}); "
                      "give the server's name, e.g. smtp.example.org (its port goes in "
                      "smtp_port)", setting="smtp_host")


def _split_addresses(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.split(",") if part.strip())


def _checked_address(address: str, setting: str) -> str:
    """``address`` ("team@example.org" or "Name <team@example.org>") with its domain in the
    ASCII form every server takes ("exämple.org" → "xn--exmple-cua.org"), or a ConfigError
    naming ``setting``. A control (a vertical tab), a line separator (U+2028) or a format
    character (bidi, zero-width) is refused (``_INVISIBLE``): a header cannot hold it, and the
    address would not read as what it is; a space of any script is text."""
    if any(unicodedata.category(char) in _INVISIBLE for char in address):
        raise _not_an_address(address, setting, "it holds a control or invisible character")
    if "@" not in address:
        raise _not_an_address(address, setting, "no @")
    name, spec = _parts(address)
    local, _, domain = spec.rpartition("@")
    try:
        ascii_domain = domain.encode("idna").decode("ascii")
        checked = Address(display_name=name, addr_spec=f"{local}@{ascii_domain}")
    except (ValueError, IndexError, UnicodeError, HeaderParseError) as error:
        raise _not_an_address(address, setting, str(error)) from None
    return str(checked)


def _not_an_address(address: str, setting: str, why: str) -> ConfigError:
    return ConfigError(f"{address!r} is not an e-mail address ({why}); write it as "
                       "team@example.org or Team <team@example.org>", setting=setting)


def mailbox(address: str) -> str:
    """Who an address reaches, however it is written: "The Team <TEAM@Exämple.org>" and
    "team@xn--exmple-cua.org" are one mailbox (the name dropped, the domain in ASCII, case
    folded: servers treat local parts without case in practice)."""
    local, _, domain = _parts(address)[1].rpartition("@")
    with contextlib.suppress(UnicodeError):
        domain = domain.encode("idna").decode("ascii")
    return f"{local}@{domain}".casefold()


def _named(spec: str, addresses: tuple[str, ...]) -> str:
    return next((address for address in addresses if _addr_spec(address) == spec), spec)


def _addr_spec(address: str) -> str:
    """The bare address: what the SMTP envelope carries (a name there, and one in another
    script above all, would need the server's SMTPUTF8)."""
    return _parts(address)[1]


def _parts(address: str) -> tuple[str, str]:
    """("Name", "local@domain") of 'Name <local@domain>' (or '"Name" <…>'); ("", address) of
    a bare address."""
    if not address.rstrip().endswith(">"):
        return "", address.strip()
    name, _, spec = address.rpartition("<")
    return name.strip().strip('"'), spec.rstrip().rstrip(">").strip()


def _domain(address: str) -> str:
    return address.rsplit("@", 1)[-1].rstrip(">").strip() or "localhost"


def _port(value: int | str) -> int:
    """A TCP port, 1 to 65535: a bad one is a setting to fix (exit 2), not a failed connection
    to retry (exit 75)."""
    text = str(value).strip()
    if text.isascii() and text.isdigit() and 1 <= int(text) <= _LAST_PORT:
        return int(text)
    raise ConfigError(f"smtp_port = {value!r} is not a port number (1 to {_LAST_PORT})",
                      setting="smtp_port")


def _on_or_off(value: bool | str, setting: str) -> bool:
    if isinstance(value, bool):
        return value
    word = value.strip().lower()
    if word not in _TRUE | _FALSE:
        raise ConfigError(f"{setting} = {value!r}: use 1 or 0", setting=setting)
    return word in _TRUE
